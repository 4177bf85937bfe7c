/**
 * The analyzer registry. `DEFAULT_ANALYZERS` is the reference's `All()`: the same names, in its
 * order, each running the finer analyzers of ours that do its work (analyzer.ts `combine`).
 * `OPT_IN_ANALYZERS` are checks the reference does not run by default (its maturity analyzer) or
 * does not have: they run only when named with `--analyzer`.
 */
import { type Analyzer, combine } from "../analyzer.js"
import { annotationAnalyzers } from "./annotations.js"
import { applicationUidAnalyzers } from "./application-uid.js"
import { authorizationPolicyAnalyzers } from "./authorization-policies.js"
import { blockedCidrAnalyzers } from "./blocked-cidrs.js"
import { conditionAnalyzers } from "./conditions.js"
import { deprecationAnalyzers } from "./deprecation.js"
import { destinationRuleSubsetAnalyzers } from "./destination-rule-subsets.js"
import { destinationRuleAnalyzers } from "./destination-rules.js"
import { envoyFilterAnalyzers } from "./envoy-filters.js"
import { gatewayApiCrdAnalyzers } from "./gateway-api-crds.js"
import { gatewaySecretAnalyzers } from "./gateway-secrets.js"
import { gatewayAnalyzers } from "./gateways.js"
import { injectionAnalyzers } from "./injection.js"
import { jwtClaimRouteAnalyzers } from "./jwt-claim-routes.js"
import { meshNetworksAnalyzers } from "./mesh-networks.js"
import { multiClusterAnalyzers } from "./multi-cluster.js"
import { policyAnalyzers } from "./policies.js"
import { schemaValidationAnalyzers } from "./schema-validation.js"
import { serviceEntryProtocolAnalyzers } from "./service-entry-protocols.js"
import { serviceAnalyzers } from "./services.js"
import { virtualServiceAnalyzers } from "./virtual-services.js"
import { webhookAnalyzers } from "./webhooks.js"
import { workloadSelectorAnalyzers } from "./workload-selectors.js"

/** Every analyzer the files above define, by name. */
const POOL: ReadonlyMap<string, Analyzer> = new Map(
  [
    ...annotationAnalyzers,
    ...applicationUidAnalyzers,
    ...authorizationPolicyAnalyzers,
    ...blockedCidrAnalyzers,
    ...conditionAnalyzers,
    ...deprecationAnalyzers,
    ...destinationRuleSubsetAnalyzers,
    ...destinationRuleAnalyzers,
    ...envoyFilterAnalyzers,
    ...gatewayApiCrdAnalyzers,
    ...gatewaySecretAnalyzers,
    ...gatewayAnalyzers,
    ...injectionAnalyzers,
    ...jwtClaimRouteAnalyzers,
    ...meshNetworksAnalyzers,
    ...multiClusterAnalyzers,
    ...policyAnalyzers,
    ...schemaValidationAnalyzers,
    ...serviceEntryProtocolAnalyzers,
    ...serviceAnalyzers,
    ...virtualServiceAnalyzers,
    ...webhookAnalyzers,
    ...workloadSelectorAnalyzers,
  ].map((a) => [a.name, a]),
)

/** A defined analyzer; a name nothing defines is a programming error caught by every test run. */
const pick = (name: string): Analyzer => {
  const found = POOL.get(name)
  if (found === undefined) throw new Error(`analyzer registry: no analyzer ${name}`)
  return found
}

/** The reference's default set (its `All()`), in its order. */
export const DEFAULT_ANALYZERS: ReadonlyArray<Analyzer> = [
  combine("annotations.K8sAnalyzer", "Checks for misplaced, invalid, deprecated and unknown mesh annotations", [
    pick("annotations.UnknownAnnotationAnalyzer"),
    pick("annotations.MisplacedAnnotationAnalyzer"),
    pick("annotations.InvalidAnnotationAnalyzer"),
    pick("annotations.DeprecatedAnnotationAnalyzer"),
  ]),
  pick("authn.BlockedCIDRsAnalyzer"),
  pick("auth.AuthorizationPoliciesAnalyzer"),
  pick("conditions.ConditionAnalyzer"),
  pick("deployment.MultiServiceAnalyzer"),
  pick("applicationUID.Analyzer"),
  pick("destinationrule.CaCertificateAnalyzer"),
  pick("destinationrule.SubsetSelectPodAnalyzer"),
  pick("deprecation.DeprecationAnalyzer"),
  pick("envoyfilter.EnvoyPatchAnalyzer"),
  pick("externalcontrolplane.ExternalControlPlaneAnalyzer"),
  pick("gateway.IngressGatewayPortAnalyzer"),
  pick("gateway.CertificateAnalyzer"),
  pick("gateway.SecretAnalyzer"),
  pick("gateway.ConflictingGatewayAnalyzer"),
  combine("injection.Analyzer", "Checks namespaces are labelled for injection and their pods run the mesh proxy", [
    pick("injection.NamespaceLabelAnalyzer"),
    pick("injection.MultipleLabelsAnalyzer"),
    pick("injection.PodProxyAnalyzer"),
  ]),
  pick("injection.ImageAnalyzer"),
  pick("injection.ImageAutoAnalyzer"),
  pick("k8sgateway.SelectorAnalyzer"),
  pick("k8sgateway.CRDVersionAnalyzer"),
  pick("meshnetworks.MeshNetworksAnalyzer"),
  pick("services.MultiClusterServiceAnalyzer"),
  combine("service.PortNameAnalyzer", "Checks the port names associated with each service", [
    pick("service.PortNameConventionAnalyzer"),
    pick("service.ExternalNameServiceTypeAnalyzer"),
  ]),
  pick("sidecar.SelectorAnalyzer"),
  pick("virtualservice.ConflictingMeshGatewayHostsAnalyzer"),
  pick("virtualservice.DestinationHostAnalyzer"),
  pick("virtualservice.DestinationRuleAnalyzer"),
  combine("virtualservice.GatewayAnalyzer", "Checks the gateways associated with each virtual service", [
    pick("virtualservice.GatewayReferenceAnalyzer"),
    pick("virtualservice.GatewayHostAnalyzer"),
  ]),
  pick("virtualservice.JWTClaimRouteAnalyzer"),
  pick("serviceentry.Analyzer"),
  pick("serviceentry.ConflictingServiceEntryProtocolAnalyzer"),
  pick("webhook.Analyzer"),
  pick("telemetry.ProviderAnalyzer"),
  pick("telemetry.SelectorAnalyzer"),
  pick("telemetry.DefaultSelectorAnalyzer"),
  pick("telemetry.LightstepAnalyzer"),
  // The reference's schema validation analyzers, one per mesh kind in its order; the one of
  // VirtualServices also warns of unreachable rules and ineffective matches.
  ...schemaValidationAnalyzers.map((a) =>
    a.name === "schema.ValidationAnalyzer.VirtualService"
      ? combine(a.name, a.description, [
          a,
          pick("virtualservice.UnreachableRuleAnalyzer"),
          pick("virtualservice.IneffectiveMatchAnalyzer"),
        ])
      : a,
  ),
]

/** Run only when named with `--analyzer`: the reference does not run these by default. */
export const OPT_IN_ANALYZERS: ReadonlyArray<Analyzer> = [
  pick("annotations.AlphaAnalyzer"),
  pick("peerauthentication.IneffectivePolicyAnalyzer"),
]

/** What `--analyzer` can name and `-L` lists: the default set, then the opt-in ones. */
export const ALL_ANALYZERS: ReadonlyArray<Analyzer> = [...DEFAULT_ANALYZERS, ...OPT_IN_ANALYZERS]

/**
 * The analyzers `--analyzer` names select, as the reference does: names that match none are
 * ignored (returned in `unknown` for a warning), and when none matches, or none is given, the
 * default set runs. Only a name selects an opt-in analyzer.
 */
export const selectAnalyzers = (
  names: ReadonlyArray<string>,
): { readonly analyzers: ReadonlyArray<Analyzer>; readonly unknown: ReadonlyArray<string> } => {
  const selected = ALL_ANALYZERS.filter((a) => names.includes(a.name))
  const unknown = names.filter((name) => !ALL_ANALYZERS.some((a) => a.name === name))
  return { analyzers: selected.length === 0 ? DEFAULT_ANALYZERS : selected, unknown }
}
