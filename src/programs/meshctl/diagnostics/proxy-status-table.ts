/**
 * `meshctl proxy-status` as data: the control planes' `/debug/syncz` rows grouped into one
 * status per connected proxy, each xDS type judged by the reference's rule (compare the last
 * nonce sent with the last nonce acknowledged), and the table and JSON made from them. Pure.
 */

/** The fields of a `/debug/syncz` row this command reads. */
export interface SyncRow {
  readonly proxy: string
  readonly connectionId: string
  readonly typeUrl: string
  readonly clusterId?: string
  readonly proxyVersion?: string
  readonly nonceSent: string
  readonly nonceAcked: string
}

export type XdsState = "SYNCED" | "NOT SENT" | "STALE" | "STALE (Never Acknowledged)"

/** The reference's rule: nothing sent; the last sent nonce acknowledged; or not (yet). */
export const xdsState = (nonceSent: string, nonceAcked: string): XdsState => {
  if (nonceSent === "") return "NOT SENT"
  if (nonceSent === nonceAcked) return "SYNCED"
  return nonceAcked === "" ? "STALE (Never Acknowledged)" : "STALE"
}

/** Column names of the types the reference always shows, in its order. */
export const STANDARD_COLUMNS = ["CDS", "LDS", "EDS", "RDS", "ECDS"] as const

const COLUMN_OF_TYPE: Readonly<Record<string, string>> = {
  "envoy.config.cluster.v3.Cluster": "CDS",
  "envoy.config.listener.v3.Listener": "LDS",
  "envoy.config.endpoint.v3.ClusterLoadAssignment": "EDS",
  "envoy.config.route.v3.RouteConfiguration": "RDS",
  "envoy.config.core.v3.TypedExtensionConfig": "ECDS",
  "envoy.extensions.transport_sockets.tls.v3.Secret": "SDS",
  "mesh.networking.nds.v1.NameTable": "NDS",
}

/** The column a type URL is shown under: CDS, LDS, ... or the message name for other types. */
export const columnOf = (typeUrl: string): string => {
  const message = typeUrl.slice(typeUrl.lastIndexOf("/") + 1)
  return COLUMN_OF_TYPE[message] ?? message.slice(message.lastIndexOf(".") + 1)
}

/** The NAME of a proxy: `<pod>.<namespace>` of a `type~ip~pod.ns~domain` node id, else the id. */
export const displayName = (proxyId: string): string => {
  const parts = proxyId.split("~")
  return parts.length === 4 && parts[2] !== "" ? (parts[2] ?? proxyId) : proxyId
}

export interface ProxyStatus {
  readonly name: string
  readonly proxy: string
  readonly cluster: string
  /** The control-plane instance the proxy is connected to. */
  readonly meshd: string
  readonly version: string
  /** Column name → state, for every type the proxy watches. */
  readonly xds: Readonly<Record<string, XdsState>>
  /** Column name → nonces, for JSON. */
  readonly nonces: Readonly<Record<string, { readonly sent: string; readonly acked: string }>>
}

/** One status per connection, from each control plane's rows; sorted by name, then control plane. */
export const proxyStatuses = (
  perControlPlane: ReadonlyArray<{ readonly meshd: string; readonly rows: ReadonlyArray<SyncRow> }>,
): ReadonlyArray<ProxyStatus> => {
  const statuses: Array<ProxyStatus> = []
  for (const { meshd, rows } of perControlPlane) {
    const byConnection = new Map<string, Array<SyncRow>>()
    for (const row of rows) {
      const list = byConnection.get(row.connectionId)
      if (list === undefined) byConnection.set(row.connectionId, [row])
      else list.push(row)
    }
    for (const group of byConnection.values()) {
      const first = group[0]!
      const xds: Record<string, XdsState> = {}
      const nonces: Record<string, { sent: string; acked: string }> = {}
      for (const row of group) {
        const column = columnOf(row.typeUrl)
        xds[column] = xdsState(row.nonceSent, row.nonceAcked)
        nonces[column] = { sent: row.nonceSent, acked: row.nonceAcked }
      }
      statuses.push({
        name: displayName(first.proxy),
        proxy: first.proxy,
        cluster: first.clusterId ?? "",
        meshd,
        version: first.proxyVersion ?? "",
        xds,
        nonces,
      })
    }
  }
  return statuses.sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : a.meshd < b.meshd ? -1 : a.meshd > b.meshd ? 1 : 0,
  )
}

/**
 * Whether a status is the proxy `[<type>/]<name>[.<namespace>]` names: its full node id, its
 * NAME, or, without a namespace in the argument, `<name>.<namespace>` with `namespace` (`-n`).
 */
export const matchesProxy = (status: ProxyStatus, argument: string, namespace: string): boolean => {
  const name = argument.includes("/") ? argument.slice(argument.indexOf("/") + 1) : argument
  if (status.proxy === name || status.name === name) return true
  return !name.includes(".") && status.name === `${name}.${namespace === "" ? "default" : namespace}`
}

/** The xDS columns shown: the standard ones, and with verbosity ≥ 1 every other type seen. */
export const xdsColumns = (statuses: ReadonlyArray<ProxyStatus>, verbosity: number): ReadonlyArray<string> => {
  if (verbosity < 1) return STANDARD_COLUMNS
  const extra = new Set<string>()
  for (const s of statuses)
    for (const column of Object.keys(s.xds))
      if (!(STANDARD_COLUMNS as ReadonlyArray<string>).includes(column)) extra.add(column)
  return [...STANDARD_COLUMNS, ...[...extra].sort()]
}

/** Left-aligned columns separated by at least three spaces, as the reference prints them. */
export const formatColumns = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => rows.reduce((w, row) => Math.max(w, (row[i] ?? "").length), h.length))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd((widths[i] ?? 0) + 3)))
      .join("")
      .trimEnd()
  return [line(header), ...rows.map(line)].join("\n")
}

/** The table: NAME, CLUSTER, the xDS columns, MESHD, VERSION. */
export const proxyStatusTable = (statuses: ReadonlyArray<ProxyStatus>, verbosity: number): string => {
  const columns = xdsColumns(statuses, verbosity)
  return formatColumns(
    ["NAME", "CLUSTER", ...columns, "MESHD", "VERSION"],
    statuses.map((s) => [
      s.name,
      s.cluster,
      ...columns.map((c) => s.xds[c] ?? "NOT SENT"),
      s.meshd,
      s.version === "" ? "unknown" : s.version,
    ]),
  )
}
