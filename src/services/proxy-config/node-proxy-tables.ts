/**
 * `meshctl node-proxy-config`'s short output, as the reference prints a ztunnel dump: the
 * workload, service, policy, certificate and connection tables (Go tabwriter, padding 1; the
 * certificate table 5), their filters, and the entries `-o json|yaml` prints.
 */
import { asObject, asObjects, asString, type Json } from "./dump.js"
import type { NodeProxyDump } from "./node-proxy-dump.js"
import { formatTable } from "./table.js"

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)
const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase()
const strings = (v: unknown): ReadonlyArray<string> => (Array.isArray(v) ? v.map(asString) : [])

export interface WorkloadFilter {
  readonly node?: string
  readonly namespace?: string
  readonly name?: string
}

const matches = (workload: Json, filter: WorkloadFilter): boolean =>
  (filter.name === undefined || filter.name === "" || same(asString(workload.name), filter.name)) &&
  (filter.namespace === undefined || filter.namespace === "" || same(asString(workload.namespace), filter.namespace)) &&
  (filter.node === undefined || filter.node === "" || same(asString(workload.node), filter.node))

/** The name of the service a waypoint address (`<namespace>/<hostname>` or a `<network>/<ip>` VIP) names. */
const waypointName = (waypoint: unknown, services: ReadonlyArray<Json>): string => {
  const destination = asString(asObject(waypoint)?.destination)
  if (asObject(waypoint) === undefined) return "None"
  const found = services.find(
    (s) => `${asString(s.namespace)}/${asString(s.hostname)}` === destination || strings(s.vips).includes(destination),
  )
  return found === undefined ? "NA" : asString(found.name)
}

export const workloadTable = (dump: NodeProxyDump, filter: WorkloadFilter): string => {
  const rows = dump.workloads
    .filter((w) => matches(w, filter))
    .sort(
      (a, b) =>
        cmp(`${asString(a.namespace)}.${asString(a.name)}`, `${asString(b.namespace)}.${asString(b.name)}`) ||
        cmp(asString(a.node), asString(b.node)),
    )
    .map((w) => [
      asString(w.namespace),
      asString(w.name),
      strings(w.workloadIps).join(",") || asString(w.hostname),
      asString(w.node),
      waypointName(w.waypoint, dump.services),
      asString(w.protocol),
    ])
  return formatTable([["NAMESPACE", "POD NAME", "ADDRESS", "NODE", "WAYPOINT", "PROTOCOL"], ...rows], 1)
}

const byNamespaceName = (a: Json, b: Json): number =>
  cmp(asString(a.namespace), asString(b.namespace)) || cmp(asString(a.name), asString(b.name))

export const serviceTable = (dump: NodeProxyDump): string => {
  const healthy = new Set(dump.workloads.filter((w) => asString(w.status) === "Healthy").map((w) => asString(w.uid)))
  const rows = [...dump.services]
    .sort((a, b) => byNamespaceName(a, b) || cmp(asString(a.hostname), asString(b.hostname)))
    .map((s) => {
      const endpoints = asObjects(Object.values(asObject(s.endpoints) ?? {}))
      const up = endpoints.filter((e) => healthy.has(asString(e.workloadUid))).length
      return [
        asString(s.namespace),
        asString(s.name),
        strings(s.vips)
          .map((vip) => vip.slice(vip.indexOf("/") + 1))
          .join(","),
        waypointName(s.waypoint, dump.services),
        `${up}/${endpoints.length}`,
      ]
    })
  return formatTable([["NAMESPACE", "SERVICE NAME", "SERVICE VIP", "WAYPOINT", "ENDPOINTS"], ...rows], 1)
}

export const policyTable = (dump: NodeProxyDump): string => {
  const rows = [...dump.policies]
    .sort(byNamespaceName)
    .map((p) => [asString(p.namespace), asString(p.name), asString(p.action), asString(p.scope)])
  return formatTable([["NAMESPACE", "POLICY NAME", "ACTION", "SCOPE"], ...rows], 1)
}

/** A decimal serial number in hex, as the reference prints it (`%x` of the big integer). */
const hexSerial = (decimal: string): string => {
  if (!/^\d+$/.test(decimal)) return decimal === "" ? "NA" : decimal
  return BigInt(decimal).toString(16)
}

const orNA = (value: string): string => (value === "" ? "NA" : value)

/** Whether `now` lies inside the certificate's validity window (false when it has none or it does not parse). */
const validAt = (cert: Json, now: Date): boolean => {
  const from = Date.parse(asString(cert.validFrom))
  const until = Date.parse(asString(cert.expirationTime))
  return Number.isFinite(from) && Number.isFinite(until) && now.getTime() > from && now.getTime() < until
}

export const certificateTable = (dump: NodeProxyDump, now: Date = new Date()): string => {
  const rows: Array<ReadonlyArray<string>> = []
  for (const secret of dump.certificates) {
    const identity = asString(secret.identity)
    const state = asString(secret.state).includes("Unavailable") ? "Unavailable" : asString(secret.state)
    const chain = asObjects(secret.certChain)
    const roots = asObjects(secret.rootCerts)
    const row = (type: string, cert: Json) => [
      identity,
      type,
      state,
      String(validAt(cert, now)),
      hexSerial(asString(cert.serialNumber)),
      orNA(asString(cert.expirationTime)),
      orNA(asString(cert.validFrom)),
    ]
    if (chain.length === 0) {
      rows.push([identity, "NA", state, "false", "NA", "NA", "NA"])
      continue
    }
    // Older node proxies put the root at the end of the chain and print no rootCerts.
    const legacy = roots.length === 0
    chain.forEach((cert, i) => {
      rows.push(row(i === 0 ? "Leaf" : i === chain.length - 1 && legacy ? "Root" : "Intermediate", cert))
    })
    for (const cert of roots) rows.push(row("Root", cert))
  }
  return formatTable([
    ["CERTIFICATE NAME", "TYPE", "STATUS", "VALID CERT", "SERIAL NUMBER", "NOT AFTER", "NOT BEFORE"],
    ...rows,
  ])
}

export interface ConnectionsFilter {
  readonly namespace: string
  /** `inbound`, `outbound`, or "" for both. */
  readonly direction: string
  /** IP addresses instead of service and workload names. */
  readonly raw: boolean
  /** Only this workload's connections (by pod name); "" for all. */
  readonly workload: string
}

const info = (state: Json): Json => asObject(state.info) ?? {}

/** workloadState's entries the filter keeps, by namespace then name. */
export const filteredWorkloadStates = (dump: NodeProxyDump, filter: ConnectionsFilter): ReadonlyArray<Json> =>
  [...dump.workloadState]
    .sort(
      (a, b) =>
        cmp(asString(info(a).namespace), asString(info(b).namespace)) ||
        cmp(asString(info(a).name), asString(info(b).name)),
    )
    .filter(
      (state) =>
        (filter.namespace === "" || filter.namespace === asString(info(state).namespace)) &&
        (filter.workload === "" || same(filter.workload, asString(info(state).name))),
    )

/** `host:port` split at the last colon (an IPv6 host comes bracketed). */
const splitHostPort = (address: string): readonly [string, string] | undefined => {
  const colon = address.lastIndexOf(":")
  if (colon < 0) return undefined
  const host = address.slice(0, colon)
  return [host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host, address.slice(colon + 1)]
}

const joinHostPort = (host: string, port: string): string =>
  host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`

export const connectionsTable = (dump: NodeProxyDump, filter: ConnectionsFilter): string => {
  const names = new Map<string, string>()
  // An address names a service (by its first VIP) before a workload (by its first IP), as in the reference.
  for (const s of dump.services) {
    const vip = strings(s.vips)[0] ?? ""
    const ip = vip.slice(vip.indexOf("/") + 1) || "None"
    names.set(`svc ${ip}`, asString(s.hostname))
  }
  for (const w of dump.workloads) {
    const ip = strings(w.workloadIps)[0] || "None"
    names.set(`wl ${ip}`, `${asString(w.name)}.${asString(w.namespace)}`)
  }
  const lookup = (address: string): string => {
    if (filter.raw) return address
    const parts = splitHostPort(address)
    if (parts === undefined) return address
    const name = names.get(`svc ${parts[0]}`) ?? names.get(`wl ${parts[0]}`)
    return name === undefined ? address : joinHostPort(name, parts[1])
  }
  const rows: Array<ReadonlyArray<string>> = []
  for (const state of filteredWorkloadStates(dump, filter)) {
    const name = `${asString(info(state).name)}.${asString(info(state).namespace)}`
    const connections = asObject(state.connections) ?? {}
    if (filter.direction !== "outbound") {
      for (const c of asObjects(connections.inbound)) {
        const src = asString(c.src)
        rows.push([
          name,
          "Inbound",
          lookup(asString(c.actualDst)),
          lookup(src),
          asString(c.originalDst),
          asString(c.protocol),
        ])
      }
    }
    if (filter.direction !== "inbound") {
      for (const c of asObjects(connections.outbound)) {
        rows.push([
          name,
          "Outbound",
          lookup(asString(c.src)),
          lookup(asString(c.actualDst)),
          lookup(asString(c.originalDst)),
          asString(c.protocol),
        ])
      }
    }
  }
  return formatTable([["WORKLOAD", "DIRECTION", "LOCAL", "REMOTE", "REMOTE TARGET", "PROTOCOL"], ...rows], 1)
}

/** `all`'s short output: every table, each after an empty line. */
export const fullSummary = (dump: NodeProxyDump, filter: WorkloadFilter, now: Date = new Date()): string =>
  [
    workloadTable(dump, filter),
    serviceTable(dump),
    policyTable(dump),
    certificateTable(dump, now),
    connectionsTable(dump, { namespace: "", direction: "", raw: false, workload: "" }),
  ]
    .map((table) => `\n${table}`)
    .join("")
