/**
 * docs/analyzers.md: every analyzer of the reference mesh with its counterpart here and the
 * codes they emit, then one line per message code. The codes are read from the registry (an
 * analyzer's declared types), so the page cannot claim a code an analyzer does not declare;
 * `npx vitest run test/scripts/analyzer-docs.test.ts` fails when the committed page, the
 * registry or this table disagree (regenerate: `node dist/scripts/gen-analyzer-docs.mjs >
 * docs/analyzers.md`).
 */
import type { Analyzer } from "./analyzer.js"
import { type MessageType, MessageTypes } from "./message-types.js"

/** Not an analyzer of the registry: validation done while reading (read-documents.ts). */
export const SCHEMA_VALIDATION = "(schema validation while reading)"

export interface Counterpart {
  /** The reference's analyzer name (`-L` there). */
  readonly reference: string
  /** Our analyzers doing its work ([] when there is none). */
  readonly ours: ReadonlyArray<string>
  readonly note?: string
}

/** The reference's analyzers (its registry order) and ours. */
export const COUNTERPARTS: ReadonlyArray<Counterpart> = [
  {
    reference: "annotations.K8sAnalyzer",
    ours: [
      "annotations.UnknownAnnotationAnalyzer",
      "annotations.MisplacedAnnotationAnalyzer",
      "annotations.InvalidAnnotationAnalyzer",
      "annotations.DeprecatedAnnotationAnalyzer",
      "annotations.AlphaAnnotationAnalyzer",
    ],
    note: "one analyzer per finding",
  },
  { reference: "authn.BlockedCIDRsAnalyzer", ours: ["authn.BlockedCIDRsAnalyzer"] },
  { reference: "auth.AuthorizationPoliciesAnalyzer", ours: ["auth.AuthorizationPoliciesAnalyzer"] },
  { reference: "conditions.ConditionAnalyzer", ours: ["conditions.ConditionAnalyzer"] },
  {
    reference: "deployment.ServiceAssociationAnalyzer",
    ours: [
      "deployment.ServiceAssociationAnalyzer",
      "deployment.MultiServiceAnalyzer",
      "deployment.ConflictingPortsAnalyzer",
    ],
    note: "the last two run one half each",
  },
  { reference: "applicationUID.Analyzer", ours: ["applicationUID.Analyzer"] },
  { reference: "destinationrule.CaCertificateAnalyzer", ours: ["destinationrule.CaCertificateAnalyzer"] },
  { reference: "destinationrule.SubsetSelectPodAnalyzer", ours: ["destinationrule.SubsetSelectPodAnalyzer"] },
  { reference: "deprecation.DeprecationAnalyzer", ours: ["deprecation.DeprecationAnalyzer"] },
  { reference: "envoyfilter.EnvoyPatchAnalyzer", ours: ["envoyfilter.EnvoyPatchAnalyzer"] },
  {
    reference: "externalcontrolplane.ExternalControlPlaneAnalyzer",
    ours: ["externalcontrolplane.ExternalControlPlaneAnalyzer"],
  },
  { reference: "gateway.IngressGatewayPortAnalyzer", ours: ["gateway.IngressGatewayPortAnalyzer"] },
  { reference: "gateway.CertificateAnalyzer", ours: ["gateway.CertificateAnalyzer"] },
  { reference: "gateway.SecretAnalyzer", ours: ["gateway.SecretAnalyzer"] },
  { reference: "gateway.ConflictingGatewayAnalyzer", ours: ["gateway.ConflictingGatewayAnalyzer"] },
  {
    reference: "injection.Analyzer",
    ours: ["injection.Analyzer", "injection.MultipleLabelsAnalyzer", "injection.PodProxyAnalyzer"],
    note: "namespaces, their labels and pods are separate analyzers here",
  },
  { reference: "injection.ImageAnalyzer", ours: ["injection.ImageMismatchAnalyzer"] },
  { reference: "injection.ImageAutoAnalyzer", ours: ["injection.ImageAutoAnalyzer"] },
  { reference: "k8sgateway.SelectorAnalyzer", ours: ["gateway.IneffectiveSelectorAnalyzer"] },
  { reference: "k8sgateway.CRDVersionAnalyzer", ours: ["k8sgateway.CRDVersionAnalyzer"] },
  { reference: "meshnetworks.MeshNetworksAnalyzer", ours: ["meshnetworks.MeshNetworksAnalyzer"] },
  {
    reference: "services.MultiClusterServiceAnalyzer",
    ours: [],
    note: "none: `analyze` reads one cluster (`--remote-contexts` is ignored)",
  },
  {
    reference: "service.PortNameAnalyzer",
    ours: ["service.PortNameAnalyzer", "service.ExternalNameServiceTypeAnalyzer"],
  },
  { reference: "sidecar.SelectorAnalyzer", ours: ["sidecar.SelectorAnalyzer"] },
  {
    reference: "virtualservice.ConflictingMeshGatewayHostsAnalyzer",
    ours: ["virtualservice.ConflictingMeshGatewayHostsAnalyzer"],
  },
  { reference: "virtualservice.DestinationHostAnalyzer", ours: ["virtualservice.DestinationHostAnalyzer"] },
  { reference: "virtualservice.DestinationRuleAnalyzer", ours: ["virtualservice.DestinationRuleAnalyzer"] },
  {
    reference: "virtualservice.GatewayAnalyzer",
    ours: ["virtualservice.GatewayAnalyzer", "virtualservice.GatewayHostAnalyzer"],
  },
  { reference: "virtualservice.JWTClaimRouteAnalyzer", ours: ["virtualservice.JWTClaimRouteAnalyzer"] },
  { reference: "serviceentry.Analyzer", ours: ["serviceentry.Analyzer"] },
  {
    reference: "serviceentry.ConflictingServiceEntryProtocolAnalyzer",
    ours: ["serviceentry.ConflictingServiceEntryProtocolAnalyzer"],
  },
  { reference: "webhook.Analyzer", ours: ["webhook.Analyzer"] },
  { reference: "telemetry.ProviderAnalyzer", ours: ["telemetry.ProviderAnalyzer"] },
  { reference: "telemetry.SelectorAnalyzer", ours: ["telemetry.SelectorAnalyzer"] },
  { reference: "telemetry.DefaultSelectorAnalyzer", ours: ["telemetry.DefaultSelectorAnalyzer"] },
  { reference: "telemetry.LightstepAnalyzer", ours: ["telemetry.LightstepAnalyzer"] },
  {
    reference: "schema.ValidationAnalyzer (one per kind)",
    ours: [SCHEMA_VALIDATION],
    note: "also VirtualService unreachable rules and ineffective matches, analyzers here",
  },
  {
    reference: "(validation warnings of VirtualServices)",
    ours: ["virtualservice.UnreachableRuleAnalyzer", "virtualservice.IneffectiveMatchAnalyzer"],
  },
  {
    reference: "(none)",
    ours: ["peerauthentication.IneffectivePolicyAnalyzer"],
    note: "this mesh only: the reference does not check PeerAuthentication ports",
  },
]

/** What each code means (one line). */
export const CODE_MEANINGS: Readonly<Record<string, string>> = {
  InternalError: "the analysis itself failed on a resource",
  Deprecated: "the configuration relies on a deprecated field, kind or provider",
  ReferencedResourceNotFound: "a host, subset, gateway, selector, credential or namespace named is not there",
  NamespaceNotInjected: "a namespace says neither yes nor no to sidecar injection",
  PodMissingProxy: "a pod of an injected namespace runs without the mesh proxy",
  GatewayPortNotOnWorkload: "retired by the reference; not reported",
  SchemaValidationError: "the resource fails its kind's schema or semantic validation",
  MisplacedAnnotation: "a mesh annotation is on a kind it does not apply to",
  UnknownAnnotation: "an annotation of the mesh's domains is not one the mesh knows",
  ConflictingMeshGatewayVirtualServiceHosts: "mesh-bound VirtualServices define the same host for the same namespaces",
  ConflictingSidecarWorkloadSelectors: "two Sidecars select the same pod",
  MultipleSidecarsWithoutWorkloadSelectors: "a namespace has more than one Sidecar without a selector",
  VirtualServiceDestinationPortSelectorRequired: "a destination host serves several ports and names none",
  DeploymentAssociatedToMultipleServices: "Services of one Deployment serve one port over different protocols",
  DeploymentRequiresServiceAssociated: "retired by the reference; not reported",
  PortNameIsNotUnderNamingConvention: "a Service port name or appProtocol declares no protocol",
  InvalidRegexp: "a regular expression does not compile (reported as a schema error here)",
  NamespaceMultipleInjectionLabels: "a namespace carries more than one kind of injection label",
  InvalidAnnotation: "a mesh annotation has a value of the wrong form",
  UnknownMeshNetworksServiceRegistry: "mesh networks name a registry that does not exist",
  NoMatchingWorkloadsFound: "an authorization policy applies to no mesh workload",
  NoServerCertificateVerificationDestinationLevel: "a DestinationRule originates TLS without a CA to verify the server",
  NoServerCertificateVerificationPortLevel: "a port of a DestinationRule originates TLS without a CA",
  VirtualServiceUnreachableRule: "a VirtualService rule can never be reached",
  VirtualServiceIneffectiveMatch: "a match repeats or is covered by an earlier one",
  VirtualServiceHostNotFoundInGateway: "no host of a VirtualService is served by a gateway it names",
  ServiceEntryAddressesRequired: "a TCP ServiceEntry has no address to capture its traffic by",
  DeprecatedAnnotation: "a mesh annotation is deprecated",
  AlphaAnnotation: "a mesh annotation belongs to an alpha feature",
  DeploymentConflictingPorts: "Services of one Deployment reach one target port through different ports",
  GatewayDuplicateCertificate: "gateways on overlapping workloads share a certificate",
  InvalidWebhook: "injection webhooks overlap, or one names a Service that does not exist",
  IngressRouteRulesNotAffected: "a gateway route bypasses the subsets mesh routes split its host by",
  InvalidApplicationUID: "an application container runs as the proxy's user ID 1337",
  ConflictingGateways: "gateways on the same workloads and port claim the same host",
  ImageAutoWithoutInjectionWarning: "a Deployment's proxy image is `auto` but no mesh webhook injects it",
  ImageAutoWithoutInjectionError: "a pod still has the `auto` proxy image: it was not injected",
  NamespaceInjectionEnabledByDefault: "a namespace without labels is injected because the injector injects by default",
  JwtClaimBasedRoutingWithoutRequestAuthN: "a route on a JWT claim has no RequestAuthentication on the gateway pods",
  ExternalNameServiceTypeInvalidPortName: "an ExternalName Service port is TCP or declares no protocol",
  EnvoyFilterUsesRelativeOperation: "a relative EnvoyFilter patch without priority may not apply",
  EnvoyFilterUsesReplaceOperationIncorrectly: "REPLACE is used where it is not supported",
  EnvoyFilterUsesAddOperationIncorrectly: "ADD on route configuration or routes is ignored",
  EnvoyFilterUsesRemoveOperationIncorrectly: "REMOVE on route configuration or routes is ignored",
  EnvoyFilterUsesRelativeOperationWithProxyVersion:
    "a relative patch with a proxy version may not apply during upgrades",
  InvalidTelemetryProvider: "access logging names no provider and the mesh config has no default",
  PodsProxyImageMismatchInNamespace: "pods run another proxy image than their injector configures",
  ConflictingTelemetryWorkloadSelectors: "two Telemetry resources select the same pod",
  MultipleTelemetriesWithoutWorkloadSelectors: "a namespace has more than one Telemetry without a selector",
  InvalidGatewayCredential: "a gateway credential holds no valid certificate and key",
  GatewayPortNotDefinedOnService: "a gateway port is not served by the Services in front of its pods",
  InvalidExternalControlPlaneConfig: "a mesh webhook has no usable address of the external control plane",
  ExternalControlPlaneAddressIsNotAHostname: "a mesh webhook reaches the control plane by IP address",
  ReferencedInternalGateway: "a VirtualService names a gateway generated from a Gateway-API Gateway",
  IneffectiveSelector: "a policy selects Gateway-API gateway pods by label instead of targetRef",
  IneffectivePolicy: "a policy or Sidecar cannot take effect where it applies",
  NegativeConditionStatus: "a status condition reports a problem",
  DestinationRuleSubsetNotSelectPods: "a DestinationRule subset selects no pod",
  UnknownDestinationRuleHost: "a DestinationRule's host is no known service",
  JwksUriFetchUnrestricted: "JWKS fetches of RequestAuthentications are not restricted by network",
  GatewayAPICRDVersionBelowMinimum: "a Gateway-API CRD is older than the mesh supports",
  ConflictingServiceEntryProtocol: "ServiceEntries give one host and port different protocols",
}

const row = (cells: ReadonlyArray<string>) => `| ${cells.join(" | ")} |`

const codesOf = (names: ReadonlyArray<string>, analyzers: ReadonlyArray<Analyzer>): ReadonlyArray<string> => {
  const codes = new Set<string>()
  for (const name of names) {
    if (name === SCHEMA_VALIDATION) codes.add(MessageTypes.SchemaValidationError.code)
    for (const t of analyzers.find((a) => a.name === name)?.types ?? []) codes.add(t.code)
  }
  return [...codes].sort()
}

/** The page, from the registry given. */
export const renderAnalyzerDocs = (analyzers: ReadonlyArray<Analyzer>): string => {
  const types: ReadonlyArray<MessageType> = Object.values(MessageTypes)
  const lines = [
    "# `meshctl analyze`: analyzers and message codes",
    "",
    "Generated from the analyzer registry (`src/services/analysis/analyzer-docs.ts`); a test fails when it drifts.",
    "The reference mesh's codes `IST0xxx` are `MSH0xxx` here.",
    "",
    "## The reference's analyzers and their counterparts",
    "",
    row(["Reference analyzer", "Counterpart(s)", "Codes", "Note"]),
    row(["---", "---", "---", "---"]),
    ...COUNTERPARTS.map((c) =>
      row([
        `\`${c.reference}\``,
        c.ours.length === 0 ? "—" : c.ours.map((n) => (n === SCHEMA_VALIDATION ? n : `\`${n}\``)).join(", "),
        codesOf(c.ours, analyzers).join(", ") || "—",
        c.note ?? "",
      ]),
    ),
    "",
    "## Analyzers of this mesh",
    "",
    row(["Analyzer", "Codes", "What it checks"]),
    row(["---", "---", "---"]),
    ...analyzers.map((a) => row([`\`${a.name}\``, codesOf([a.name], analyzers).join(", "), a.description])),
    "",
    "## Message codes",
    "",
    ...[...types]
      .sort((a, b) => a.code.localeCompare(b.code))
      .map((t) => `- **${t.code}** ${t.name} (${t.level}): ${CODE_MEANINGS[t.name] ?? ""}`),
    "",
  ]
  return lines.join("\n")
}
