/**
 * `proxy-config cluster`: the clusters of a dump, the reference's filters (`--fqdn`, `--port`,
 * `--subset`, `--direction`) and its short table. Mesh cluster names are subset keys
 * `direction|port|subset|fqdn`; other names (PassthroughCluster, agent, ...) show `-` there.
 */
import { asNumber, asObject, asString, type Json } from "./dump.js"
import { formatTable } from "./table.js"

export interface SubsetKey {
  readonly direction: string
  readonly port: number
  readonly subset: string
  readonly fqdn: string
}

/** `outbound|80|v1|reviews.default.svc.cluster.local`; undefined for names of fewer than four parts. */
export const parseSubsetKey = (name: string): SubsetKey | undefined => {
  const parts = name.split("|")
  if (parts.length < 4) return undefined
  const port = Number.parseInt(parts[1] ?? "", 10)
  return {
    direction: parts[0] ?? "",
    port: Number.isNaN(port) ? 0 : port,
    subset: parts[2] ?? "",
    fqdn: parts[3] ?? "",
  }
}

export interface ClusterFilter {
  readonly fqdn: string
  readonly port: number
  readonly subset: string
  readonly direction: string
}

export const NO_CLUSTER_FILTER: ClusterFilter = { fqdn: "", port: 0, subset: "", direction: "" }

/** The cluster's name, else its EDS service name (clusters may be unnamed in a dump). */
const clusterName = (cluster: Json): string =>
  asString(cluster.name) || asString(asObject(cluster.eds_cluster_config)?.service_name)

/** Substring matches on the name, as the reference does (`--port 80` matches `|80|`). */
export const clusterMatches = (filter: ClusterFilter, cluster: Json): boolean => {
  const name = clusterName(cluster)
  if (filter.fqdn !== "" && !name.includes(filter.fqdn)) return false
  if (filter.direction !== "" && !name.includes(filter.direction)) return false
  if (filter.subset !== "" && !name.includes(filter.subset)) return false
  if (filter.port !== 0 && !name.includes(`|${filter.port}|`)) return false
  return true
}

/** The discovery type: `type`, or a custom `cluster_type`'s name. */
export const clusterType = (cluster: Json): string =>
  asString(cluster.type) || asString(asObject(cluster.cluster_type)?.name)

/** `name.namespace` of the DestinationRule that shaped the cluster (its `istio.config` metadata). */
export const describeManagement = (metadata: unknown): string => {
  const filterMetadata = asObject(asObject(metadata)?.filter_metadata)
  const config = asString(asObject(filterMetadata?.istio)?.config ?? asObject(filterMetadata?.mesh)?.config)
  if (config === "") return ""
  const pieces = config.split("/")
  // /apis/<group>/<version>/namespaces/<ns>/<kind>/<name>
  if (pieces[1] !== "apis" || pieces[4] !== "namespaces") return "<unknown>"
  return pieces.length === 8 ? `${pieces[7]}.${pieces[5]}` : ""
}

const sortKey = (cluster: Json) => {
  const name = clusterName(cluster)
  const key = parseSubsetKey(name)
  return key ?? { direction: "", port: 0, subset: "", fqdn: name }
}

/** Sorted by FQDN, then subset, port and direction. */
export const filteredClusters = (clusters: ReadonlyArray<Json>, filter: ClusterFilter): ReadonlyArray<Json> =>
  clusters
    .filter((c) => clusterMatches(filter, c))
    .map((c) => ({ c, k: sortKey(c) }))
    .sort((a, b) =>
      a.k.fqdn !== b.k.fqdn
        ? a.k.fqdn < b.k.fqdn
          ? -1
          : 1
        : a.k.subset !== b.k.subset
          ? a.k.subset < b.k.subset
            ? -1
            : 1
          : a.k.port !== b.k.port
            ? a.k.port - b.k.port
            : a.k.direction < b.k.direction
              ? -1
              : a.k.direction > b.k.direction
                ? 1
                : 0,
    )
    .map(({ c }) => c)

export const clusterTable = (clusters: ReadonlyArray<Json>, filter: ClusterFilter): string =>
  formatTable([
    ["SERVICE FQDN", "PORT", "SUBSET", "DIRECTION", "TYPE", "DESTINATION RULE"],
    ...filteredClusters(clusters, filter).map((cluster) => {
      const name = clusterName(cluster)
      const key = parseSubsetKey(name)
      const rule = describeManagement(cluster.metadata)
      return key === undefined
        ? [name, "-", "-", "-", clusterType(cluster), rule]
        : [key.fqdn, `${asNumber(key.port) ?? 0}`, key.subset || "-", key.direction, clusterType(cluster), rule]
    }),
  ])
