/**
 * The registry of configuration kinds: (group, kind) → schema and metadata. Upstream groups
 * (`networking.istio.io`, ...) are accepted as aliases of the mesh groups.
 */
import { Schema } from "effect"

export const NETWORKING_GROUP = "networking.mesh.io"
export const SECURITY_GROUP = "security.mesh.io"
export const TELEMETRY_GROUP = "telemetry.mesh.io"
export const EXTENSIONS_GROUP = "extensions.mesh.io"
export const CORE_GROUP = ""
export const DISCOVERY_GROUP = "discovery.k8s.io"

const MESH_VERSIONS = ["v1", "v1beta1", "v1alpha3"] as const

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
}

const openSpec = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const meshKind = (
  group: string,
  alias: string,
  kind: string,
  plural: string,
  schema: Schema.Schema.AnyNoContext = openSpec,
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
})

const kindInfos: Array<KindInfo> = []
const byGroupKind = new Map<string, KindInfo>()
const groupAliases = new Map<string, string>()

/** Registers (or replaces) a kind. */
export const registerKind = (info: KindInfo): void => {
  const key = `${info.group}/${info.kind}`
  const existing = kindInfos.findIndex((k) => `${k.group}/${k.kind}` === key)
  if (existing >= 0) kindInfos[existing] = info
  else kindInfos.push(info)
  byGroupKind.set(key, info)
  for (const alias of info.aliasGroups) {
    groupAliases.set(alias, info.group)
    byGroupKind.set(`${alias}/${info.kind}`, info)
  }
}

/** All registered kinds. */
export const allKinds = (): ReadonlyArray<KindInfo> => kindInfos

/** The mesh group a (possibly upstream) group name stands for. */
export const normaliseGroup = (group: string): string => groupAliases.get(group) ?? group

export const lookupKind = (group: string, kind: string): KindInfo | undefined => byGroupKind.get(`${group}/${kind}`)

/** Kinds by name only (for "did you mean" style messages). */
export const kindsNamed = (kind: string): ReadonlyArray<KindInfo> => kindInfos.filter((k) => k.kind === kind)

export const meshKinds = {
  meshKind,
  openSpec,
}

for (const [kind, plural] of [
  ["ServiceEntry", "serviceentries"],
  ["WorkloadEntry", "workloadentries"],
  ["WorkloadGroup", "workloadgroups"],
  ["DestinationRule", "destinationrules"],
  ["VirtualService", "virtualservices"],
  ["Gateway", "gateways"],
  ["Sidecar", "sidecars"],
  ["EnvoyFilter", "envoyfilters"],
  ["ProxyConfig", "proxyconfigs"],
] as const) {
  registerKind(meshKind(NETWORKING_GROUP, "networking.istio.io", kind, plural))
}
for (const [kind, plural] of [
  ["PeerAuthentication", "peerauthentications"],
  ["RequestAuthentication", "requestauthentications"],
  ["AuthorizationPolicy", "authorizationpolicies"],
] as const) {
  registerKind(meshKind(SECURITY_GROUP, "security.istio.io", kind, plural))
}
registerKind(meshKind(TELEMETRY_GROUP, "telemetry.istio.io", "Telemetry", "telemetries"))
registerKind(meshKind(EXTENSIONS_GROUP, "extensions.istio.io", "WasmPlugin", "wasmplugins"))

const coreKind = (
  kind: string,
  plural: string,
  body: KindInfo["body"],
  options: { group?: string; namespaced?: boolean } = {},
): KindInfo => ({
  group: options.group ?? CORE_GROUP,
  kind,
  plural,
  namespaced: options.namespaced ?? true,
  version: "v1",
  versions: ["v1"],
  aliasGroups: [],
  body: body,
  schema: openSpec,
})

registerKind(coreKind("Service", "services", ["spec", "status"]))
registerKind(coreKind("Endpoints", "endpoints", ["subsets"]))
registerKind(
  coreKind("EndpointSlice", "endpointslices", ["addressType", "endpoints", "ports"], { group: DISCOVERY_GROUP }),
)
registerKind(coreKind("Pod", "pods", ["spec", "status"]))
registerKind(coreKind("Namespace", "namespaces", ["spec", "status"], { namespaced: false }))
