/**
 * The registry of configuration kinds: (group, kind) → schema and metadata. Upstream groups
 * (`networking.istio.io`, ...) are accepted as aliases of the mesh groups, with versions
 * v1, v1beta1 and v1alpha3.
 */
import type { Schema } from "effect"
import { AuthorizationPolicy } from "./schemas/authorization-policy.js"
import { DestinationRule } from "./schemas/destination-rule.js"
import { EnvoyFilter } from "./schemas/envoy-filter.js"
import { Gateway, gatewayNameProblem } from "./schemas/gateway.js"
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

export const NETWORKING_GROUP = "networking.mesh.io"
export const SECURITY_GROUP = "security.mesh.io"
export const TELEMETRY_GROUP = "telemetry.mesh.io"
export const EXTENSIONS_GROUP = "extensions.mesh.io"
export const CORE_GROUP = ""
export const DISCOVERY_GROUP = "discovery.k8s.io"

/** Versions accepted for the mesh kinds; resources are normalised to the first. */
export const MESH_VERSIONS = ["v1", "v1beta1", "v1alpha3"] as const

export interface KindInfo {
  readonly group: string
  readonly kind: string
  readonly plural: string
  readonly namespaced: boolean
  /** The version resources are normalised to. */
  readonly version: string
  /** Versions accepted on input. */
  readonly versions: ReadonlyArray<string>
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
}

const meshKind = (
  group: string,
  alias: string,
  kind: string,
  plural: string,
  schema: Schema.Schema.AnyNoContext,
  extra: Partial<Pick<KindInfo, "nameProblem">> = {},
): KindInfo => ({
  group,
  kind,
  plural,
  namespaced: true,
  version: "v1",
  versions: MESH_VERSIONS,
  aliasGroups: [alias],
  body: "spec",
  schema,
  strict: true,
  ...extra,
})

const orchestratorKind = (
  kind: string,
  plural: string,
  body: ReadonlyArray<string>,
  schema: Schema.Schema.AnyNoContext,
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

const NET_ALIAS = "networking.istio.io"
const SEC_ALIAS = "security.istio.io"

const kindInfos: Array<KindInfo> = [
  meshKind(NETWORKING_GROUP, NET_ALIAS, "ServiceEntry", "serviceentries", ServiceEntry),
  meshKind(NETWORKING_GROUP, NET_ALIAS, "WorkloadEntry", "workloadentries", WorkloadEntry),
  meshKind(NETWORKING_GROUP, NET_ALIAS, "WorkloadGroup", "workloadgroups", WorkloadGroup),
  meshKind(NETWORKING_GROUP, NET_ALIAS, "DestinationRule", "destinationrules", DestinationRule),
  meshKind(NETWORKING_GROUP, NET_ALIAS, "VirtualService", "virtualservices", VirtualServiceSchema),
  meshKind(NETWORKING_GROUP, NET_ALIAS, "Gateway", "gateways", Gateway, { nameProblem: gatewayNameProblem }),
  meshKind(NETWORKING_GROUP, NET_ALIAS, "Sidecar", "sidecars", Sidecar),
  meshKind(NETWORKING_GROUP, NET_ALIAS, "EnvoyFilter", "envoyfilters", EnvoyFilter),
  meshKind(NETWORKING_GROUP, NET_ALIAS, "ProxyConfig", "proxyconfigs", ProxyConfig),
  meshKind(SECURITY_GROUP, SEC_ALIAS, "PeerAuthentication", "peerauthentications", PeerAuthentication),
  meshKind(SECURITY_GROUP, SEC_ALIAS, "RequestAuthentication", "requestauthentications", RequestAuthentication),
  meshKind(SECURITY_GROUP, SEC_ALIAS, "AuthorizationPolicy", "authorizationpolicies", AuthorizationPolicy),
  meshKind(TELEMETRY_GROUP, "telemetry.istio.io", "Telemetry", "telemetries", Telemetry),
  meshKind(EXTENSIONS_GROUP, "extensions.istio.io", "WasmPlugin", "wasmplugins", WasmPlugin),
  orchestratorKind("Service", "services", ["spec", "status"], Service),
  orchestratorKind("Endpoints", "endpoints", ["subsets"], Endpoints),
  orchestratorKind("EndpointSlice", "endpointslices", ["addressType", "endpoints", "ports"], EndpointSlice, {
    group: DISCOVERY_GROUP,
  }),
  orchestratorKind("Pod", "pods", ["spec", "status"], Pod),
  orchestratorKind("Namespace", "namespaces", ["spec", "status"], Namespace, { namespaced: false }),
]

const byGroupKind = new Map<string, KindInfo>()
const groupAliases = new Map<string, string>()

const index = (info: KindInfo): void => {
  byGroupKind.set(`${info.group}/${info.kind}`, info)
  for (const alias of info.aliasGroups) {
    groupAliases.set(alias, info.group)
    byGroupKind.set(`${alias}/${info.kind}`, info)
  }
}

for (const info of kindInfos) index(info)

/** Registers (or replaces) a kind, e.g. for tests or embedders adding their own. */
export const registerKind = (info: KindInfo): void => {
  const existing = kindInfos.findIndex((k) => k.group === info.group && k.kind === info.kind)
  if (existing >= 0) kindInfos[existing] = info
  else kindInfos.push(info)
  index(info)
}

/** All registered kinds. */
export const allKinds = (): ReadonlyArray<KindInfo> => kindInfos

/** The mesh group a (possibly upstream) group name stands for. */
export const normaliseGroup = (group: string): string => groupAliases.get(group) ?? group

/** The kind registered under (group, kind), the group being a mesh group or an alias of one. */
export const lookupKind = (group: string, kind: string): KindInfo | undefined => byGroupKind.get(`${group}/${kind}`)

/** Kinds by name only (for "expected apiVersion" messages). */
export const kindsNamed = (kind: string): ReadonlyArray<KindInfo> => kindInfos.filter((k) => k.kind === kind)

/** `group/version` as written in apiVersion (`v1` for the core group). */
export const apiVersionOf = (info: Pick<KindInfo, "group" | "version">): string =>
  info.group === "" ? info.version : `${info.group}/${info.version}`
