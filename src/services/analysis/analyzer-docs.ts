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

/**
 * Not an analyzer of the registry: validation reported while reading (read-documents.ts), for the
 * kinds without a validation analyzer and documents that cannot be decoded.
 */
export const SCHEMA_VALIDATION = "(schema validation while reading)"

/** The kinds of the reference's schema validation analyzers that this mesh has, in its order. */
export const REFERENCE_VALIDATED_KINDS: ReadonlyArray<string> = [
  "AuthorizationPolicy",
  "DestinationRule",
  "EnvoyFilter",
  "Gateway",
  "PeerAuthentication",
  "ProxyConfig",
  "RequestAuthentication",
  "ServiceEntry",
  "Sidecar",
  "Telemetry",
  "VirtualService",
  "WasmPlugin",
  "WorkloadEntry",
  "WorkloadGroup",
]

export interface Counterpart {
  /** The reference's analyzer name (`-L` there). */
  readonly reference: string
  /** Our analyzers doing its work ([] when there is none). */
  readonly ours: ReadonlyArray<string>
  readonly note?: string
}

/** The reference's analyzers (its `All()` order) and ours, by the same names. */
export const COUNTERPARTS: ReadonlyArray<Counterpart> = [
  ...[
    "annotations.K8sAnalyzer",
    "authn.BlockedCIDRsAnalyzer",
    "auth.AuthorizationPoliciesAnalyzer",
    "conditions.ConditionAnalyzer",
    "deployment.MultiServiceAnalyzer",
    "applicationUID.Analyzer",
    "destinationrule.CaCertificateAnalyzer",
    "destinationrule.SubsetSelectPodAnalyzer",
    "deprecation.DeprecationAnalyzer",
    "envoyfilter.EnvoyPatchAnalyzer",
    "externalcontrolplane.ExternalControlPlaneAnalyzer",
    "gateway.IngressGatewayPortAnalyzer",
    "gateway.CertificateAnalyzer",
    "gateway.SecretAnalyzer",
    "gateway.ConflictingGatewayAnalyzer",
    "injection.Analyzer",
    "injection.ImageAnalyzer",
    "injection.ImageAutoAnalyzer",
    "k8sgateway.SelectorAnalyzer",
    "k8sgateway.CRDVersionAnalyzer",
    "meshnetworks.MeshNetworksAnalyzer",
    "services.MultiClusterServiceAnalyzer",
    "service.PortNameAnalyzer",
    "sidecar.SelectorAnalyzer",
    "virtualservice.ConflictingMeshGatewayHostsAnalyzer",
    "virtualservice.DestinationHostAnalyzer",
    "virtualservice.DestinationRuleAnalyzer",
    "virtualservice.GatewayAnalyzer",
    "virtualservice.JWTClaimRouteAnalyzer",
    "serviceentry.Analyzer",
    "serviceentry.ConflictingServiceEntryProtocolAnalyzer",
    "webhook.Analyzer",
    "telemetry.ProviderAnalyzer",
    "telemetry.SelectorAnalyzer",
    "telemetry.DefaultSelectorAnalyzer",
    "telemetry.LightstepAnalyzer",
  ].map((name) => ({ reference: name, ours: [name] })),
  // The reference's schema validation analyzers (its Pilot kinds, then its mesh config inputs).
  ...REFERENCE_VALIDATED_KINDS.map((kind) => ({
    reference: `schema.ValidationAnalyzer.${kind}`,
    ours: [`schema.ValidationAnalyzer.${kind}`],
  })),
  {
    reference: "schema.ValidationAnalyzer.TrafficExtension",
    ours: [],
    note: "this mesh has no TrafficExtension kind",
  },
  {
    reference: "schema.ValidationAnalyzer.MeshNetworks, schema.ValidationAnalyzer.MeshConfig",
    ours: [],
    note: "`--meshNetworksFile`, `--meshConfigFile` and the mesh ConfigMap are validated when read: invalid ones fail the command",
  },
  {
    reference: "(none: the reference's CRD schemas and decoding)",
    ours: [SCHEMA_VALIDATION],
    note: "Gateway-API kinds, and mesh documents that cannot be decoded, are reported while reading, whatever `--analyzer` selects",
  },
  {
    reference: "annotations.AlphaAnalyzer",
    ours: ["annotations.AlphaAnalyzer"],
    note: "opt-in: not in the reference's default set either",
  },
  {
    reference: "(none)",
    ours: ["peerauthentication.IneffectivePolicyAnalyzer"],
    note: "opt-in, this mesh only: the reference does not check PeerAuthentication ports",
  },
]

/** What each code means (one line). */
export const CODE_MEANINGS: Readonly<Record<string, string>> = {
  InternalError: "the analysis itself failed on a resource",
  Deprecated: "the configuration relies on a deprecated field, kind or provider",
  ReferencedResourceNotFound: "a host, subset, gateway, selector, credential or namespace named is not there",
  NamespaceNotInjected: "a namespace says neither yes nor no to sidecar injection",
  PodMissingProxy: "a pod of an injected namespace runs without the mesh proxy",
  SchemaValidationError: "the resource fails its kind's schema or semantic validation",
  MisplacedAnnotation: "a mesh annotation is on a kind it does not apply to",
  UnknownAnnotation: "an annotation of the mesh's domains is not one the mesh knows",
  ConflictingMeshGatewayVirtualServiceHosts: "mesh-bound VirtualServices define the same host for the same namespaces",
  ConflictingSidecarWorkloadSelectors: "two Sidecars select the same pod",
  MultipleSidecarsWithoutWorkloadSelectors: "a namespace has more than one Sidecar without a selector",
  VirtualServiceDestinationPortSelectorRequired: "a destination host serves several ports and names none",
  DeploymentAssociatedToMultipleServices: "Services of one Deployment serve one port over different protocols",
  PortNameIsNotUnderNamingConvention: "a Service port name or appProtocol declares no protocol",
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
  MultiClusterInconsistentService: "a Service is defined differently in the clusters analyzed together",
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

/** The page, from the registry given: the default set and the opt-in analyzers. */
export const renderAnalyzerDocs = (defaults: ReadonlyArray<Analyzer>, optIn: ReadonlyArray<Analyzer>): string => {
  const analyzers = [...defaults, ...optIn]
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
    "Opt-in analyzers run only when named with `--analyzer`; the parts of an analyzer are the finer checks it runs.",
    "",
    row(["Analyzer", "Runs", "Codes", "What it checks", "Parts"]),
    row(["---", "---", "---", "---", "---"]),
    ...[...defaults, ...optIn].map((a) =>
      row([
        `\`${a.name}\``,
        optIn.includes(a) ? "opt-in" : "default",
        codesOf([a.name], analyzers).join(", "),
        a.description,
        (a.parts ?? []).map((p) => `\`${p.name}\``).join(", "),
      ]),
    ),
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
