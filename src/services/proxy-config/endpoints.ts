/**
 * `proxy-config endpoint`: endpoints with their health, from either source the reference reads:
 * the admin `/clusters?format=json` output (`cluster_statuses[].host_statuses[]`, which carries
 * outlier-detection results) or a config dump's EndpointsConfigDump (ClusterLoadAssignments,
 * which do not, so OUTLIER CHECK is OK there). Filters: `--address`, `--port`, `--cluster`,
 * `--status`.
 */
import { asNumber, asObject, asObjects, asString, type ConfigDump, endpointConfigsOf, type Json } from "./dump.js"
import { formatTable } from "./table.js"

export interface EndpointRow {
  readonly address: string
  readonly port: number
  readonly status: string
  readonly outlierCheck: "OK" | "FAILED"
  readonly cluster: string
}

export interface EndpointFilter {
  readonly address: string
  readonly port: number
  readonly cluster: string
  readonly status: string
}

export const NO_ENDPOINT_FILTER: EndpointFilter = { address: "", port: 0, cluster: "", status: "" }

const hostAddress = (address: unknown): { readonly address: string; readonly port: number } => {
  const a = asObject(address)
  const socket = asObject(a?.socket_address)
  if (socket !== undefined) return { address: asString(socket.address), port: asNumber(socket.port_value) ?? 0 }
  const internal = asString(asObject(a?.envoy_internal_address)?.server_listener_name)
  if (internal !== "") return { address: `envoy://${internal}`, port: 0 }
  return { address: asString(asObject(a?.pipe)?.path), port: 0 }
}

/** Rows of an admin `/clusters?format=json` answer. */
export const endpointsOfClusterStatuses = (statuses: Json): ReadonlyArray<EndpointRow> =>
  asObjects(statuses.cluster_statuses).flatMap((cluster) =>
    asObjects(cluster.host_statuses).map((host) => {
      const health = asObject(host.health_status) ?? {}
      return {
        ...hostAddress(host.address),
        status: asString(health.eds_health_status) || "UNKNOWN",
        outlierCheck: health.failed_outlier_check === true ? "FAILED" : "OK",
        cluster: asString(cluster.name),
      } satisfies EndpointRow
    }),
  )

/** Rows of a config dump's EDS section. */
export const endpointsOfConfigDump = (dump: ConfigDump): ReadonlyArray<EndpointRow> =>
  endpointConfigsOf(dump).flatMap((assignment) =>
    asObjects(assignment.endpoints).flatMap((locality) =>
      asObjects(locality.lb_endpoints).map(
        (lb) =>
          ({
            ...hostAddress(asObject(lb.endpoint)?.address),
            status: asString(lb.health_status) || "UNKNOWN",
            outlierCheck: "OK",
            cluster: asString(assignment.cluster_name),
          }) satisfies EndpointRow,
      ),
    ),
  )

const render = (row: EndpointRow): string => (row.port === 0 ? row.address : `${row.address}:${row.port}`)

export const endpointMatches = (filter: EndpointFilter, row: EndpointRow): boolean =>
  (filter.address === "" || row.address.toLowerCase() === filter.address.toLowerCase()) &&
  (filter.port === 0 || row.port === filter.port) &&
  (filter.cluster === "" || row.cluster.toLowerCase() === filter.cluster.toLowerCase()) &&
  (filter.status === "" || row.status.toLowerCase() === filter.status.toLowerCase())

/** By address, then cluster. */
export const filteredEndpoints = (
  rows: ReadonlyArray<EndpointRow>,
  filter: EndpointFilter,
): ReadonlyArray<EndpointRow> =>
  rows
    .filter((r) => endpointMatches(filter, r))
    .slice()
    .sort((a, b) => {
      const [x, y] = [render(a), render(b)]
      if (x !== y) return x < y ? -1 : 1
      return a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0
    })

export const endpointTable = (rows: ReadonlyArray<EndpointRow>, filter: EndpointFilter): string =>
  formatTable([
    ["ENDPOINT", "STATUS", "OUTLIER CHECK", "CLUSTER"],
    ...filteredEndpoints(rows, filter).map((r) => [render(r), r.status, r.outlierCheck, r.cluster]),
  ])
