/**
 * The registry of configuration kinds: (group, kind) → schema and metadata. Upstream groups
 * (`networking.istio.io`, ...) are accepted as aliases of the mesh groups, each kind under v1
 * and every version the reference's CRD serves for it (networking: v1beta1, v1alpha3;
 * security: v1beta1; telemetry and extensions: v1alpha1). The Gateway-API kinds (`gateway.networking.k8s.io`) are read as
 * well; their Gateway is the mesh's kind `KubernetesGateway` (see `KindInfo.apiKind`).
 */
import type { Schema } from "effect"
import { MESH_DOMAIN } from "../constants.js"
import type { ResourceMeta } from "./resource.js"
import { AuthorizationPolicy } from "./schemas/authorization-policy.js"
import { DestinationRule } from "./schemas/destination-rule.js"
import { EnvoyFilter } from "./schemas/envoy-filter.js"
import { Gateway, gatewayNameProblem, noNamespaceGatewayHostProblems } from "./schemas/gateway.js"
import { BackendTLSPolicy, XBackendTrafficPolicy } from "./schemas/gateway-api/backend-policies.js"
import { KubernetesGateway } from "./schemas/gateway-api/gateway.js"
import { GatewayClass } from "./schemas/gateway-api/gateway-class.js"
import { GRPCRoute } from "./schemas/gateway-api/grpc-route.js"
import { HTTPRoute } from "./schemas/gateway-api/http-route.js"
import { InferencePool } from "./schemas/gateway-api/inference-pool.js"
import { ListenerSet } from "./schemas/gateway-api/listener-set.js"
import { ReferenceGrant } from "./schemas/gateway-api/reference-grant.js"
import { TCPRoute, TLSRoute } from "./schemas/gateway-api/stream-routes.js"
import { IngressClassSpec, IngressSpec } from "./schemas/ingress.js"
import { EndpointSlice, Endpoints, Namespace, Pod, Service } from "./schemas/orchestrator.js"
import { PeerAuthentication } from "./schemas/peer-authentication.js"
import { ProxyConfig } from "./schemas/proxy-config.js"
import { RequestAuthentication } from "./schemas/request-authentication.js"
import { ServiceEntry } from "./schemas/service-entry.js"
import { Sidecar } from "./schemas/sidecar.js"
import { Telemetry } from "./schemas/telemetry.js"
import { VirtualService as VirtualServiceSchema } from "./schemas/virtual-service.js"
import { WasmPlugin } from "./schemas/wasm-plugin.js"
import { WorkloadEntry, WorkloadGroup } from "./schemas/workload-entry.js"
import type { KnownKind, SpecByKind } from "./specs.js"

export const NETWORKING_GROUP = "networking.mesh.io"
export const SECURITY_GROUP = "security.mesh.io"
export const TELEMETRY_GROUP = "telemetry.mesh.io"
export const EXTENSIONS_GROUP = "extensions.mesh.io"
export const CORE_GROUP = ""
export const DISCOVERY_GROUP = "discovery.k8s.io"
/** The orchestrator's `networking.k8s.io` group (Ingress, IngressClass). */
export const ORCH_NETWORKING_GROUP = "networking.k8s.io"
export const GATEWAY_API_GROUP = "gateway.networking.k8s.io"
/** The Gateway API's experimental kinds (`X...`), watched like its own group. */
export const GATEWAY_API_X_GROUP = "gateway.networking.x-k8s.io"
/** The Gateway-API inference extension's group (InferencePool). */
export const INFERENCE_GROUP = "inference.networking.k8s.io"

/** Versions accepted for the networking kinds; resources are normalised to the first. */
export const MESH_VERSIONS = ["v1", "v1beta1", "v1alpha3"] as const
/** The security kinds: the reference serves v1 and v1beta1. */
export const SECURITY_VERSIONS = ["v1", "v1beta1"] as const
/** Telemetry and WasmPlugin: the reference serves v1alpha1 (Telemetry also v1, the mesh's own). */
export const ALPHA_KIND_VERSIONS = ["v1", "v1alpha1"] as const

export interface KindInfo {
  readonly group: string
  /**
   * The mesh's name of the kind: resource identity (`kind/namespace/name`), `SpecByKind`, the
   * `kind` of parsed resources. Unique across groups.
   */
  readonly kind: string
  /**
   * The kind as documents and the API server write it, when it differs from `kind`: the
   * Gateway-API `Gateway` is the mesh's `KubernetesGateway`. See `apiKindOf`.
   */
  readonly apiKind?: string
  readonly plural: string
  readonly namespaced: boolean
  /** The version resources are normalised to. */
  readonly version: string
  /** Versions accepted on input. */
  readonly versions: ReadonlyArray<string>
  /**
   * Accepted versions the reference's CRD marks deprecated, with the warning its API server
   * returns for them (`deprecationWarning`): documents at these versions are valid, with a warning.
   */
  readonly deprecatedVersions?: Readonly<Record<string, string>>
  /** Other group names accepted on input for this kind. */
  readonly aliasGroups: ReadonlyArray<string>
  /**
   * Where the body lives: `"spec"` for kinds whose content is the `spec` field, otherwise the
   * top-level fields (besides apiVersion/kind/metadata) gathered into one object.
   */
  readonly body: "spec" | ReadonlyArray<string>
  readonly schema: Schema.Schema.AnyNoContext
  /** Unknown fields are errors (mesh kinds) or ignored (orchestrator kinds). */
  readonly strict: boolean
  /** Extra rule on the resource name beyond the RFC 1123 subdomain every name obeys. */
  readonly nameProblem?: (name: string) => string | undefined
  /**
   * Rules that need the resource's metadata as well as its decoded spec (its namespace, its
   * annotations). `path` is absolute (`spec.exportTo`, `metadata.annotations`).
   */
  readonly resourceCheck?: ResourceCheck<unknown>
}

/** A rule on a decoded spec of type `S` and the resource's metadata; `path` is absolute. */
export type ResourceCheck<S> = (spec: S, meta: ResourceMeta, report: (path: string, message: string) => void) => void

/** The dry-run annotation: AuthorizationPolicy only (upstream spelling accepted). */
export const DRY_RUN_ANNOTATIONS = [`${MESH_DOMAIN}/dry-run`, "istio.io/dry-run"] as const

const GO_BOOLEANS = new Set(["1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False"])

/**
 * The dry-run annotation: refused, or checked against the action (`actionOf`, the kinds that
 * allow it: AuthorizationPolicy).
 */
const dryRunCheck =
  <S>(actionOf?: (spec: S) => string): ResourceCheck<S> =>
  (spec, meta, report) => {
    for (const key of DRY_RUN_ANNOTATIONS) {
      const value = meta.annotations[key]
      if (value === undefined) continue
      const path = `metadata.annotations[${JSON.stringify(key)}]`
      if (actionOf === undefined) {
        report(path, `${meta.namespace}/${meta.name} has unsupported annotation ${key}, please remove the annotation`)
        continue
      }
      const action = actionOf(spec)
      if (action !== "ALLOW" && action !== "DENY") {
        report(path, `the annotation ${key} currently only supports action ALLOW/DENY, found action ${action}`)
      } else if (!GO_BOOLEANS.has(value)) {
        report(path, `annotation ${key} has an invalid value (${value}): expected true or false`)
      }
    }
  }

/** exportTo rules that need the namespace: `.` and the namespace itself name the same thing. */
const exportToCheck =
  (
    destinationRule: boolean,
  ): ResourceCheck<{ readonly exportTo?: ReadonlyArray<string>; readonly workloadSelector?: unknown }> =>
  (s, meta, report) => {
    const exportTo = s.exportTo ?? []
    if (exportTo.includes(".") && exportTo.includes(meta.namespace)) {
      report("spec.exportTo", `duplicate entries in exportTo: . and current namespace ${meta.namespace}`)
    }
    if (destinationRule && s.workloadSelector !== undefined && exportTo.length > 0) {
      const targets = new Set(exportTo.map((e) => (e === "." ? meta.namespace : e)))
      if (!targets.has(meta.namespace)) {
        report("spec.exportTo", "destination rule with workload selector cannot have exportTo beyond current namespace")
      } else if (targets.size > 1) {
        report("spec.exportTo", "destination rule with workload selector cannot have multiple entries in exportTo")
      }
    }
  }

const both =
  <S>(...checks: ReadonlyArray<ResourceCheck<S>>): ResourceCheck<S> =>
  (spec, meta, report) => {
    for (const check of checks) check(spec, meta, report)
  }

/**
 * A kind's schema decodes to the spec type consumers read it as (specs.ts `SpecByKind`): the
 * kind constructors check it, so a resource's `spec` is its schema's Type.
 */
type SchemaOf<K extends KnownKind> = Schema.Schema.AnyNoContext & { readonly Type: SpecByKind[K] }

const meshKind = <K extends KnownKind>(
  group: string,
  alias: string,
  kind: K,
  plural: string,
  schema: SchemaOf<K>,
  extra: {
    readonly nameProblem?: KindInfo["nameProblem"]
    readonly resourceCheck?: ResourceCheck<SpecByKind[K]>
    readonly versions?: ReadonlyArray<string>
  } = {},
): KindInfo => ({
  group,
  kind,
  plural,
  namespaced: true,
  version: "v1",
  versions: extra.versions ?? MESH_VERSIONS,
  aliasGroups: [alias],
  body: "spec",
  schema,
  strict: true,
  ...(extra.nameProblem !== undefined ? { nameProblem: extra.nameProblem } : {}),
  // parse.ts runs the check on the value `schema` decoded, of type SpecByKind[K].
  resourceCheck: (extra.resourceCheck ?? dryRunCheck()) as ResourceCheck<unknown>,
})

const orchestratorKind = <K extends KnownKind>(
  kind: K,
  plural: string,
  body: "spec" | ReadonlyArray<string>,
  schema: SchemaOf<K>,
  options: { group?: string; namespaced?: boolean } = {},
): KindInfo => ({
  group: options.group ?? CORE_GROUP,
  kind,
  plural,
  namespaced: options.namespaced ?? true,
  version: "v1",
  versions: ["v1"],
  aliasGroups: [],
  body,
  schema,
  strict: false,
})

/**
 * A Gateway-API kind: the upstream CRDs carry fields the mesh does not type, so unknown fields
 * are ignored (strict: false); the typed fields are checked. Resources are normalised to the
 * first of `versions`.
 */
const gatewayApiKind = <K extends KnownKind>(
  kind: K,
  plural: string,
  versions: ReadonlyArray<string>,
  schema: SchemaOf<K>,
  options: {
    readonly apiKind?: string
    readonly namespaced?: boolean
    readonly deprecatedVersions?: Readonly<Record<string, string>>
    readonly group?: string
  } = {},
): KindInfo => ({
  group: options.group ?? GATEWAY_API_GROUP,
  kind,
  ...(options.apiKind !== undefined ? { apiKind: options.apiKind } : {}),
  plural,
  namespaced: options.namespaced ?? true,
  version: versions[0] as string,
  versions,
  ...(options.deprecatedVersions !== undefined ? { deprecatedVersions: options.deprecatedVersions } : {}),
  aliasGroups: [],
  body: "spec",
  schema,
  strict: false,
})

const GATEWAY_API_VERSIONS = ["v1", "v1beta1"] as const

/** The Gateway-API CRDs' wording for a served version on its way out. */
const gatewayApiDeprecation = (kind: string, version: string, replacement: string): Record<string, string> => ({
  [version]: `The ${version} version of ${kind} has been deprecated and will be removed in a future release of the API. Please upgrade to ${replacement}.`,
})

const NET_ALIAS = "networking.istio.io"
const SEC_ALIAS = "security.istio.io"

const kindInfos: Array<KindInfo> = [
  meshKind(NETWORKING_GROUP, NET_ALIAS, "ServiceEntry", "serviceentries", ServiceEntry, {
    resourceCheck: both(dryRunCheck(), exportToCheck(false)),
  }),
  meshKind(NETWORKING_GROUP, NET_ALIAS, "WorkloadEntry", "workloadentries", WorkloadEntry),
  meshKind(NETWORKING_GROUP, NET_ALIAS, "WorkloadGroup", "workloadgroups", WorkloadGroup),
  meshKind(NETWORKING_GROUP, NET_ALIAS, "DestinationRule", "destinationrules", DestinationRule, {
    resourceCheck: both(dryRunCheck(), exportToCheck(true)),
  }),
  meshKind(NETWORKING_GROUP, NET_ALIAS, "VirtualService", "virtualservices", VirtualServiceSchema, {
    resourceCheck: both(dryRunCheck(), exportToCheck(false)),
  }),
  meshKind(NETWORKING_GROUP, NET_ALIAS, "Gateway", "gateways", Gateway, {
    nameProblem: gatewayNameProblem,
    resourceCheck: both(dryRunCheck(), (spec, meta, report) =>
      noNamespaceGatewayHostProblems(spec, meta.annotations, report),
    ),
  }),
  meshKind(NETWORKING_GROUP, NET_ALIAS, "Sidecar", "sidecars", Sidecar),
  meshKind(NETWORKING_GROUP, NET_ALIAS, "EnvoyFilter", "envoyfilters", EnvoyFilter),
  meshKind(NETWORKING_GROUP, NET_ALIAS, "ProxyConfig", "proxyconfigs", ProxyConfig),
  meshKind(SECURITY_GROUP, SEC_ALIAS, "PeerAuthentication", "peerauthentications", PeerAuthentication, {
    versions: SECURITY_VERSIONS,
  }),
  meshKind(SECURITY_GROUP, SEC_ALIAS, "RequestAuthentication", "requestauthentications", RequestAuthentication, {
    versions: SECURITY_VERSIONS,
  }),
  meshKind(SECURITY_GROUP, SEC_ALIAS, "AuthorizationPolicy", "authorizationpolicies", AuthorizationPolicy, {
    resourceCheck: dryRunCheck((policy) => policy.action),
    versions: SECURITY_VERSIONS,
  }),
  meshKind(TELEMETRY_GROUP, "telemetry.istio.io", "Telemetry", "telemetries", Telemetry, {
    versions: ALPHA_KIND_VERSIONS,
  }),
  meshKind(EXTENSIONS_GROUP, "extensions.istio.io", "WasmPlugin", "wasmplugins", WasmPlugin, {
    versions: ALPHA_KIND_VERSIONS,
  }),
  gatewayApiKind("GatewayClass", "gatewayclasses", GATEWAY_API_VERSIONS, GatewayClass, { namespaced: false }),
  gatewayApiKind("KubernetesGateway", "gateways", GATEWAY_API_VERSIONS, KubernetesGateway, { apiKind: "Gateway" }),
  gatewayApiKind("HTTPRoute", "httproutes", GATEWAY_API_VERSIONS, HTTPRoute),
  gatewayApiKind("GRPCRoute", "grpcroutes", [...GATEWAY_API_VERSIONS, "v1alpha2"], GRPCRoute, {
    deprecatedVersions: gatewayApiDeprecation("GRPCRoute", "v1alpha2", "v1"),
  }),
  // Gateway API v1.6 made TCPRoute and TLSRoute v1 (so they are no longer alpha-only and are
  // watched without the alpha switch, as the reference does); the alpha versions stay readable.
  gatewayApiKind("TCPRoute", "tcproutes", ["v1", "v1alpha2"], TCPRoute, {
    deprecatedVersions: gatewayApiDeprecation("TCPRoute", "v1alpha2", "v1"),
  }),
  gatewayApiKind("TLSRoute", "tlsroutes", ["v1", "v1alpha3", "v1alpha2"], TLSRoute, {
    deprecatedVersions: {
      ...gatewayApiDeprecation("TLSRoute", "v1alpha2", "v1"),
      ...gatewayApiDeprecation("TLSRoute", "v1alpha3", "v1"),
    },
  }),
  // ReferenceGrant: v1 is served since v1.6 but v1beta1 stays the stored version.
  gatewayApiKind("ReferenceGrant", "referencegrants", ["v1beta1", "v1", "v1alpha2"], ReferenceGrant, {
    deprecatedVersions: gatewayApiDeprecation("ReferenceGrant", "v1alpha2", "v1beta1"),
  }),
  // ListenerSet is v1 since Gateway API v1.5 (the reference reads only that version).
  gatewayApiKind("ListenerSet", "listenersets", ["v1"], ListenerSet),
  // BackendTLSPolicy is v1 since Gateway API v1.4; the experimental channel still serves v1alpha3.
  gatewayApiKind("BackendTLSPolicy", "backendtlspolicies", ["v1", "v1alpha3"], BackendTLSPolicy, {
    deprecatedVersions: gatewayApiDeprecation("BackendTLSPolicy", "v1alpha3", "v1"),
  }),
  // Experimental (alpha only): watched with PILOT_ENABLE_ALPHA_GATEWAY_API, as the reference does.
  gatewayApiKind("XBackendTrafficPolicy", "xbackendtrafficpolicies", ["v1alpha1"], XBackendTrafficPolicy, {
    group: GATEWAY_API_X_GROUP,
  }),
  // The inference extension's pool (its own group; the reference reads only v1). The orchestrator
  // store watches it only with ENABLE_GATEWAY_API_INFERENCE_EXTENSION (crd-versions.ts).
  gatewayApiKind("InferencePool", "inferencepools", ["v1"], InferencePool, { group: INFERENCE_GROUP }),
  orchestratorKind("Service", "services", ["spec", "status"], Service),
  orchestratorKind("Endpoints", "endpoints", ["subsets"], Endpoints),
  orchestratorKind("EndpointSlice", "endpointslices", ["addressType", "endpoints", "ports"], EndpointSlice, {
    group: DISCOVERY_GROUP,
  }),
  orchestratorKind("Pod", "pods", ["spec", "status"], Pod),
  orchestratorKind("Namespace", "namespaces", ["spec", "status"], Namespace, { namespaced: false }),
  // Served as mesh Gateways and VirtualServices per mesh config's ingress settings (src/services/ingress/).
  orchestratorKind("Ingress", "ingresses", "spec", IngressSpec, { group: ORCH_NETWORKING_GROUP }),
  orchestratorKind("IngressClass", "ingressclasses", "spec", IngressClassSpec, {
    group: ORCH_NETWORKING_GROUP,
    namespaced: false,
  }),
]

/** A kind of the mesh's own groups (`*.mesh.io`; their upstream aliases resolve to them). */
export const isMeshKind = (info: Pick<KindInfo, "group">): boolean => info.group.endsWith(`.${MESH_DOMAIN}`)

/** The kind as documents and the API server write it (`Gateway` for the mesh's `KubernetesGateway`). */
export const apiKindOf = (info: Pick<KindInfo, "kind" | "apiKind">): string => info.apiKind ?? info.kind

// The static kind table, indexed once at load and never changed: safe to share between servers.
const byGroupKind = new Map<string, KindInfo>()
const byKind = new Map<string, KindInfo>()
const groupAliases = new Map<string, string>()

const index = (info: KindInfo): void => {
  const apiKind = apiKindOf(info)
  byGroupKind.set(`${info.group}/${apiKind}`, info)
  byKind.set(info.kind, info)
  for (const alias of info.aliasGroups) {
    groupAliases.set(alias, info.group)
    byGroupKind.set(`${alias}/${apiKind}`, info)
  }
}

for (const info of kindInfos) index(info)

/** All registered kinds. */
export const allKinds = (): ReadonlyArray<KindInfo> => kindInfos

/** The mesh group a (possibly upstream) group name stands for. */
export const normaliseGroup = (group: string): string => groupAliases.get(group) ?? group

/**
 * The kind registered under (group, kind) as a document or the API server writes them (the API
 * kind: `Gateway` in `gateway.networking.k8s.io`), the group being a registered group or an
 * alias of one.
 */
export const lookupKind = (group: string, kind: string): KindInfo | undefined => byGroupKind.get(`${group}/${kind}`)

/** The kind registered under the mesh's own kind name (a resource's `kind`, `SpecByKind`'s keys). */
export const kindInfoOf = (kind: string): KindInfo | undefined => byKind.get(kind)

/** Kinds by API kind only, whatever their group (for "expected apiVersion" messages). */
export const kindsNamed = (kind: string): ReadonlyArray<KindInfo> => kindInfos.filter((k) => apiKindOf(k) === kind)

/**
 * The warning for a document of `info` at `version` when the reference marks that version
 * deprecated; undefined otherwise (and for versions the kind does not accept).
 */
export const deprecationWarningOf = (info: Pick<KindInfo, "deprecatedVersions">, version: string): string | undefined =>
  info.deprecatedVersions?.[version]

/** `group/version` as written in apiVersion (`v1` for the core group). */
export const apiVersionOf = (info: Pick<KindInfo, "group" | "version">): string =>
  info.group === "" ? info.version : `${info.group}/${info.version}`
