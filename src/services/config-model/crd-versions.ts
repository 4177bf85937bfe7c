/**
 * Which orchestrator custom resources carry mesh configuration, and which of their served
 * versions to watch. Every mesh kind is a custom resource under its mesh group
 * (`networking.mesh.io`, ...) and under the upstream alias group (`networking.istio.io`, ...);
 * a cluster may serve either, both or neither. The Gateway-API kinds (`gateway.networking.k8s.io`)
 * are watched too, unless left out (`CrdSourceOptions`). All served versions of one CRD hold the
 * same objects, so one version per (group, kind) is watched: the group's preferred version when
 * this code knows it for the kind, else the newest version known for the kind that serves it
 * (a version the reference marks deprecated only when no other serves it). Versions this code
 * does not know are reported and never watched.
 */
import {
  allKinds,
  apiKindOf,
  deprecationWarningOf,
  GATEWAY_API_GROUP,
  GATEWAY_API_X_GROUP,
  INFERENCE_GROUP,
  isMeshKind,
  type KindInfo,
  ORCH_NETWORKING_GROUP,
} from "./kinds.js"

/** One (group, kind) a mesh kind may be served under. */
export interface CrdSource {
  /** The group as the API server serves it: the mesh group or an upstream alias. */
  readonly group: string
  /** True for the upstream alias groups (`*.istio.io`). */
  readonly upstream: boolean
  readonly info: KindInfo
}

/** Which kinds besides the mesh's own to watch. */
export interface CrdSourceOptions {
  /** The Gateway-API kinds (`PILOT_ENABLE_GATEWAY_API`); default true. */
  readonly gatewayApi?: boolean
  /**
   * Also the Gateway-API kinds served only at alpha versions (`PILOT_ENABLE_ALPHA_GATEWAY_API`);
   * default false. Needs `gatewayApi`. Since Gateway API v1.6 no kind read here is alpha-only
   * (TCPRoute and TLSRoute have v1), so this keeps only future alpha kinds out.
   */
  readonly alphaGatewayApi?: boolean
  /** The orchestrator's Ingress and IngressClass (`networking.k8s.io/v1`), served as Gateways; default true. */
  readonly ingress?: boolean
  /**
   * The inference extension's InferencePool (`inference.networking.k8s.io`,
   * `ENABLE_GATEWAY_API_INFERENCE_EXTENSION`); default false. Needs `gatewayApi`.
   */
  readonly inferenceExtension?: boolean
}

const isGatewayApiKind = (info: KindInfo): boolean =>
  info.group === GATEWAY_API_GROUP || info.group === GATEWAY_API_X_GROUP
const isDeprecated = (info: KindInfo, version: string): boolean => deprecationWarningOf(info, version) !== undefined
/** A kind with no version beyond alpha (v1alpha2, ...): experimental upstream. */
const isAlphaOnly = (info: KindInfo): boolean => info.versions.every((v) => /alpha/.test(v))

const watchesGatewayApiKind = (info: KindInfo, options: CrdSourceOptions): boolean =>
  (options.gatewayApi ?? true) && (!isAlphaOnly(info) || (options.alphaGatewayApi ?? false))

/** The inference extension's kinds are Gateway-API backends: watched only with both switches on. */
const watchesInferenceKind = (info: KindInfo, options: CrdSourceOptions): boolean =>
  info.group === INFERENCE_GROUP && (options.gatewayApi ?? true) && (options.inferenceExtension ?? false)

/**
 * Every (group, kind) to look for, in kind-table order: mesh groups first, then their upstream
 * aliases, then the Gateway-API kinds the options keep (InferencePool among them when the
 * inference extension is on), then Ingress and IngressClass.
 */
export const crdSources = (options: CrdSourceOptions = {}): ReadonlyArray<CrdSource> => {
  const kinds = allKinds().filter(isMeshKind)
  const gatewayApi = allKinds().filter(
    (info) => (isGatewayApiKind(info) && watchesGatewayApiKind(info, options)) || watchesInferenceKind(info, options),
  )
  const ingress = (options.ingress ?? true) ? allKinds().filter((info) => info.group === ORCH_NETWORKING_GROUP) : []
  return [
    ...kinds.map((info) => ({ group: info.group, upstream: false, info })),
    ...kinds.flatMap((info) => info.aliasGroups.map((group) => ({ group, upstream: true, info }))),
    ...gatewayApi.map((info) => ({ group: info.group, upstream: false, info })),
    ...ingress.map((info) => ({ group: info.group, upstream: false, info })),
  ]
}

/** The distinct groups of `crdSources`, in its order. */
export const crdGroups = (options: CrdSourceOptions = {}): ReadonlyArray<string> => [
  ...new Set(crdSources(options).map((s) => s.group)),
]

/** Every version some registered kind of `group` (an alias included) accepts. */
const knownVersionsOf = (group: string): ReadonlySet<string> =>
  new Set(
    allKinds()
      .filter((info) => info.group === group || info.aliasGroups.includes(group))
      .flatMap((info) => info.versions),
  )

/** `/apis/<group>` as the API server answers it (APIGroup), the fields read here. */
export interface ApiGroupDocument {
  readonly versions?: ReadonlyArray<{ readonly version?: string }>
  readonly preferredVersion?: { readonly version?: string }
}

/** `/apis/<group>/<version>` (APIResourceList), the fields read here. */
export interface ApiResourceListDocument {
  readonly resources?: ReadonlyArray<{ readonly name?: string }>
}

/** The versions a group serves, in the server's order. */
export const servedVersions = (doc: ApiGroupDocument): ReadonlyArray<string> =>
  (doc.versions ?? []).flatMap((v) => (typeof v.version === "string" && v.version !== "" ? [v.version] : []))

/** Resource names (plurals; subresources excluded) of a resource list. */
export const servedPlurals = (doc: ApiResourceListDocument | undefined): ReadonlySet<string> =>
  new Set((doc?.resources ?? []).flatMap((r) => (typeof r.name === "string" && !r.name.includes("/") ? [r.name] : [])))

/** What to do with one group, from its discovery documents. */
export interface GroupPlan {
  readonly group: string
  /** Kinds to watch, each at one version. */
  readonly watch: ReadonlyArray<{ readonly source: CrdSource; readonly version: string }>
  /** Served versions this code does not know (never watched), in the server's order. */
  readonly unknownVersions: ReadonlyArray<string>
  /** Kinds served only at versions this code does not know: not watched. */
  readonly onlyUnknown: ReadonlyArray<{ readonly source: CrdSource; readonly versions: ReadonlyArray<string> }>
  /** Kinds the group does not serve at all (CRD not installed): empty. */
  readonly absent: ReadonlyArray<CrdSource>
}

/**
 * Plans the watches of one group. `group` is undefined when the API server does not serve the
 * group (404); `plurals` gives the resource names served at each version (a version missing
 * from it serves nothing). `options` must be those given to `crdGroups`.
 */
export const planGroup = (
  group: string,
  doc: ApiGroupDocument | undefined,
  plurals: ReadonlyMap<string, ReadonlySet<string>>,
  options: CrdSourceOptions = {},
): GroupPlan => {
  const sources = crdSources(options).filter((s) => s.group === group)
  const served = doc === undefined ? [] : servedVersions(doc)
  const preferred = doc?.preferredVersion?.version
  const known = knownVersionsOf(group)
  const unknownVersions = served.filter((v) => !known.has(v))
  const watch: Array<GroupPlan["watch"][number]> = []
  const onlyUnknown: Array<GroupPlan["onlyUnknown"][number]> = []
  const absent: Array<CrdSource> = []
  for (const source of sources) {
    const servesKind = (version: string) => plurals.get(version)?.has(source.info.plural) === true
    // The preferred version first when the kind knows it, then the kind's versions, newest first.
    // A version the reference marks deprecated only when the kind is served at no other.
    const kindVersions = source.info.versions
      .filter((v) => served.includes(v))
      .sort((a, b) => Number(isDeprecated(source.info, a)) - Number(isDeprecated(source.info, b)))
    const order =
      preferred !== undefined && kindVersions.includes(preferred) ? [preferred, ...kindVersions] : kindVersions
    const version = order.find(servesKind)
    if (version !== undefined) {
      watch.push({ source, version })
      continue
    }
    const unknown = served.filter((v) => !source.info.versions.includes(v) && servesKind(v))
    if (unknown.length > 0) onlyUnknown.push({ source, versions: unknown })
    else absent.push(source)
  }
  return { group, watch, unknownVersions, onlyUnknown, absent }
}

/** The kind of a source as the API server names it (`Gateway`, not the mesh's `KubernetesGateway`). */
export const sourceApiKind = (source: CrdSource): string => apiKindOf(source.info)
