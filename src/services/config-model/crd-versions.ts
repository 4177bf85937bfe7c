/**
 * Which orchestrator custom resources carry mesh configuration, and which of their served
 * versions to watch. Every mesh kind is a custom resource under its mesh group
 * (`networking.mesh.io`, ...) and under the upstream alias group (`networking.istio.io`, ...);
 * a cluster may serve either, both or neither. All served versions of one CRD hold the same
 * objects (the mesh's CRDs convert nothing), so one version per (group, kind) is watched: the
 * group's preferred version when this code knows it, else the newest known one that serves the
 * kind. Versions this code does not know are reported and never watched.
 */
import { MESH_DOMAIN } from "../constants.js"
import { allKinds, type KindInfo, MESH_VERSIONS } from "./kinds.js"

/** One (group, kind) a mesh kind may be served under. */
export interface CrdSource {
  /** The group as the API server serves it: the mesh group or an upstream alias. */
  readonly group: string
  /** True for the upstream alias groups (`*.istio.io`). */
  readonly upstream: boolean
  readonly info: KindInfo
}

const isMeshKind = (info: KindInfo): boolean => info.group.endsWith(`.${MESH_DOMAIN}`)

/** Every (group, kind) to look for, mesh groups first, in kind-table order. */
export const crdSources = (): ReadonlyArray<CrdSource> => {
  const kinds = allKinds().filter(isMeshKind)
  return [
    ...kinds.map((info) => ({ group: info.group, upstream: false, info })),
    ...kinds.flatMap((info) => info.aliasGroups.map((group) => ({ group, upstream: true, info }))),
  ]
}

/** The distinct groups of `crdSources`, mesh groups first. */
export const crdGroups = (): ReadonlyArray<string> => [...new Set(crdSources().map((s) => s.group))]

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

export const isKnownVersion = (version: string): boolean => (MESH_VERSIONS as ReadonlyArray<string>).includes(version)

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
 * from it serves nothing).
 */
export const planGroup = (
  group: string,
  doc: ApiGroupDocument | undefined,
  plurals: ReadonlyMap<string, ReadonlySet<string>>,
): GroupPlan => {
  const sources = crdSources().filter((s) => s.group === group)
  const served = doc === undefined ? [] : servedVersions(doc)
  const preferred = doc?.preferredVersion?.version
  const known = MESH_VERSIONS.filter((v) => served.includes(v))
  // The preferred version first when known, then the newest known (MESH_VERSIONS order).
  const order = preferred !== undefined && known.includes(preferred as never) ? [preferred, ...known] : known
  const unknownVersions = served.filter((v) => !isKnownVersion(v))
  const watch: Array<GroupPlan["watch"][number]> = []
  const onlyUnknown: Array<GroupPlan["onlyUnknown"][number]> = []
  const absent: Array<CrdSource> = []
  for (const source of sources) {
    const servesKind = (version: string) => plurals.get(version)?.has(source.info.plural) === true
    const version = order.find(servesKind)
    if (version !== undefined) {
      watch.push({ source, version })
      continue
    }
    const unknown = unknownVersions.filter(servesKind)
    if (unknown.length > 0) onlyUnknown.push({ source, versions: unknown })
    else absent.push(source)
  }
  return { group, watch, unknownVersions, onlyUnknown, absent }
}
