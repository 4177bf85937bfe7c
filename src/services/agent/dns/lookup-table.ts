/**
 * The DNS proxy's lookup table, built from the name table the discovery server sends (NDS), with
 * the reference agent's rules:
 * - every entry answers under its host with its addresses, A for IPv4 and AAAA for IPv6;
 * - an orchestrator service whose host lies in the pod's cluster domain also answers as cluster
 *   DNS would for `name.namespace`, `name.namespace.svc` and — in the pod's own namespace —
 *   `name`, plus the alt_hosts the entry carries (e.g. `name.namespace.svc.clusterset.local`);
 *   services of another cluster domain keep their full name only (their short forms could clash);
 * - each of those names with the first search domain of resolv.conf appended (what a stub
 *   resolver with `ndots:5` asks first, e.g. `reviews.default.default.svc.cluster.local`)
 *   answers with a CNAME to the name and the name's addresses, so that the query never travels
 *   upstream only to come back NXDOMAIN — except for names that already end in that search
 *   domain: `reviews.default.svc.cluster.local.default.svc.cluster.local` is not the mesh's and
 *   goes upstream;
 * - a name not in the table is looked up under `*.<its parent>`, `*.<its grandparent>`, ... (the
 *   most specific wildcard wins). A plain wildcard answers under the asked name; a wildcard with
 *   the search domain appended (`*.wild.default.svc.cluster.local`, the expansion of `*.wild`)
 *   answers with a CNAME to `*.wild` and the addresses under `*.wild`;
 * - only A and AAAA are answered from the table (every other type is forwarded upstream); a known
 *   name without addresses of the asked family answers empty (NOERROR, no records), never with a
 *   lone CNAME.
 * Names are kept lower-case without the trailing dot (the form `dns-packet` reads).
 */
import { isIP } from "node:net"
import { ORCHESTRATOR_REGISTRY } from "../../registry/orchestrator/service.js"
import type { NameInfo, NameTable } from "../../xds/proxygen/nds/name-table.js"

/** TTL of every answer the proxy gives from its table (the reference's). */
export const DNS_TTL_SECONDS = 30

/** What of the pod the table depends on. */
export interface PodDns {
  /** `POD_NAMESPACE`. */
  readonly namespace: string
  /** `--domain`; empty means `<namespace>.svc.cluster.local`. */
  readonly domain: string
  /** resolv.conf search domains, in order. */
  readonly searchDomains: ReadonlyArray<string>
}

export interface LookupTable {
  /** Every name the table knows: hosts, their alternative names, expansions, wildcards (`*.x`). */
  readonly allHosts: ReadonlySet<string>
  /** IPv4 and IPv6 addresses per name (a name without addresses of a family is absent). */
  readonly name4: ReadonlyMap<string, ReadonlyArray<string>>
  readonly name6: ReadonlyMap<string, ReadonlyArray<string>>
  /** Search-expanded names and the name each is an alias of. */
  readonly cname: ReadonlyMap<string, string>
}

export type RecordType = "A" | "AAAA" | "CNAME"

export interface TableRecord {
  readonly name: string
  readonly type: RecordType
  readonly ttl: number
  readonly data: string
}

export const normalizeName = (name: string): string => {
  const lower = name.toLowerCase()
  return lower.endsWith(".") ? lower.slice(0, -1) : lower
}

/**
 * The cluster DNS suffix without the pod's namespace (`svc.cluster.local`), as the reference
 * derives it from the pod's domain: only hosts under it get the short forms.
 */
export const clusterDomainOf = (pod: Pick<PodDns, "namespace" | "domain">): string => {
  const domain = pod.domain !== "" ? normalizeName(pod.domain) : `${pod.namespace}.svc.cluster.local`
  const parts = domain.split(".")
  return (parts[0] === pod.namespace ? parts.slice(1) : parts).join(".")
}

const splitAddresses = (ips: ReadonlyArray<string>) => {
  const v4: Array<string> = []
  const v6: Array<string> = []
  for (const ip of ips) {
    const family = isIP(ip)
    if (family === 4) v4.push(ip)
    else if (family === 6) v6.push(ip)
  }
  return { v4, v6 }
}

/** The names one table entry answers for (before search expansion). */
const namesOf = (rawHost: string, info: NameInfo, pod: PodDns, clusterDomain: string): Set<string> => {
  const host = normalizeName(rawHost)
  if (info.registry !== ORCHESTRATOR_REGISTRY) return new Set([host])
  // The reference gives an orchestrator host written with its root dot no name at all (such a
  // key never comes from a registry, whose hosts have no trailing dot).
  if (rawHost.endsWith(".")) return new Set()
  const names = new Set([host])
  const { shortname, namespace } = info
  if (shortname === undefined || namespace === undefined) return names
  if (clusterDomain === "" || !host.endsWith(clusterDomain)) return names
  names.add(normalizeName(`${shortname}.${namespace}`))
  if (namespace === pod.namespace) names.add(normalizeName(shortname))
  // one level more (`.svc`), as the reference: deeper forms are rare and would cost space
  names.add(normalizeName(`${shortname}.${namespace}.${clusterDomain.split(".")[0]}`))
  for (const alt of info.alt_hosts ?? []) names.add(normalizeName(alt))
  return names
}

/** Builds the lookup table of `table` for the pod. */
export const buildLookupTable = (table: NameTable, pod: PodDns): LookupTable => {
  const allHosts = new Set<string>()
  const name4 = new Map<string, ReadonlyArray<string>>()
  const name6 = new Map<string, ReadonlyArray<string>>()
  const cname = new Map<string, string>()
  const search = pod.searchDomains[0] !== undefined ? normalizeName(pod.searchDomains[0]) : ""
  const clusterDomain = clusterDomainOf(pod)
  for (const [rawHost, info] of Object.entries(table.table ?? {})) {
    const { v4, v6 } = splitAddresses(info.ips ?? [])
    if (v4.length === 0 && v6.length === 0) continue
    const names = namesOf(rawHost, info, pod, clusterDomain)
    for (const name of names) {
      allHosts.add(name)
      if (v4.length > 0) name4.set(name, v4)
      if (v6.length > 0) name6.set(name, v6)
      // A name already ending in the first search domain is not expanded again (the suffix is
      // compared as text, as the reference compares it).
      if (search === "" || name.endsWith(search)) continue
      const expanded = `${name}.${search}`
      // `reviews` + `default.svc.cluster.local` is a name of the entry already, not an alias
      if (names.has(expanded)) continue
      cname.set(expanded, name)
      allHosts.add(expanded)
    }
  }
  return { allHosts, name4, name6, cname }
}

/** The most specific wildcard name of the table covering `name` (never `name` itself). */
const wildcardFor = (table: LookupTable, name: string): string | undefined => {
  for (let dot = name.indexOf("."); dot >= 0; dot = name.indexOf(".", dot + 1)) {
    const candidate = `*.${name.slice(dot + 1)}`
    if (table.allHosts.has(candidate)) return candidate
  }
  return undefined
}

const addressRecords = (name: string, addresses: ReadonlyArray<string>, type: "A" | "AAAA"): Array<TableRecord> =>
  addresses.map((data) => ({ name, type, ttl: DNS_TTL_SECONDS, data }))

/**
 * The answer records for a question, or undefined when the proxy forwards it: a name the table
 * does not know, or a type other than A and AAAA. A known name without records of the asked
 * family answers empty (NOERROR, no data): a host with only IPv4 addresses has no AAAA, but it
 * exists.
 */
export const lookup = (table: LookupTable, qname: string, qtype: string): ReadonlyArray<TableRecord> | undefined => {
  const question = normalizeName(qname)
  let key: string | undefined = table.allHosts.has(question) ? question : undefined
  const wildcard = key === undefined
  if (key === undefined) key = wildcardFor(table, question)
  if (key === undefined) return undefined
  if (qtype !== "A" && qtype !== "AAAA") return undefined
  const target = table.cname.get(key)
  const host = target ?? key
  const addresses = (qtype === "A" ? table.name4 : table.name6).get(host)
  if (addresses === undefined || addresses.length === 0) return []
  // Below a plain wildcard the records carry the asked name; behind a CNAME, the CNAME's target.
  const owner = wildcard && target === undefined ? question : host
  const alias: Array<TableRecord> =
    target === undefined ? [] : [{ name: question, type: "CNAME", ttl: DNS_TTL_SECONDS, data: target }]
  return [...alias, ...addressRecords(owner, addresses, qtype)]
}

/** Number of names the table answers (hosts, alternative names, expansions, wildcards). */
export const tableSize = (table: LookupTable): number => table.allHosts.size
