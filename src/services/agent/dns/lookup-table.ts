/**
 * The DNS proxy's lookup table, built from the name table the discovery server sends (NDS), as
 * the reference agent builds it:
 * - every host answers with its addresses (VIPs, or a headless service's endpoint addresses), A
 *   for IPv4 and AAAA for IPv6;
 * - an orchestrator service in the pod's cluster domain also answers as cluster DNS would for
 *   `name.namespace`, `name.namespace.svc` and — in the pod's own namespace — `name`, plus the
 *   alt_hosts the table carries;
 * - every one of those names expanded with the first search domain of resolv.conf (what a stub
 *   resolver with `ndots:5` asks first, e.g. `reviews.default.svc.cluster.local.default.svc.
 *   cluster.local`) answers with a CNAME to the name and its addresses, so that the query never
 *   travels upstream only to come back NXDOMAIN;
 * - `*.example.com` answers every name below example.com (the most specific wildcard wins), and
 *   a wildcard name expanded with the first search domain answers as its bare name.
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

export interface Addresses {
  readonly v4: ReadonlyArray<string>
  readonly v6: ReadonlyArray<string>
}

export interface LookupTable {
  /** Exact names and their addresses. */
  readonly hosts: ReadonlyMap<string, Addresses>
  /** Search-expanded names and the name each is an alias of. */
  readonly aliases: ReadonlyMap<string, string>
  /** `*.example.com` under the key `example.com`. */
  readonly wildcards: ReadonlyMap<string, Addresses>
  /** The first search domain, "" when resolv.conf has none. */
  readonly searchSuffix: string
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

const splitAddresses = (ips: ReadonlyArray<string>): Addresses => {
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
const namesOf = (host: string, info: NameInfo, pod: PodDns, clusterDomain: string): Set<string> => {
  const names = new Set([host])
  const { shortname, namespace } = info
  if (info.registry !== ORCHESTRATOR_REGISTRY || shortname === undefined || namespace === undefined) return names
  // services of another cluster domain keep their full name only: their short forms could clash
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
  const hosts = new Map<string, Addresses>()
  const aliases = new Map<string, string>()
  const wildcards = new Map<string, Addresses>()
  const searchSuffix = pod.searchDomains[0] !== undefined ? normalizeName(pod.searchDomains[0]) : ""
  const clusterDomain = clusterDomainOf(pod)
  for (const [rawHost, info] of Object.entries(table.table ?? {})) {
    const addresses = splitAddresses(info.ips ?? [])
    if (addresses.v4.length === 0 && addresses.v6.length === 0) continue
    const host = normalizeName(rawHost)
    if (host.startsWith("*.")) {
      wildcards.set(host.slice(2), addresses)
      continue
    }
    const names = namesOf(host, info, pod, clusterDomain)
    for (const name of names) {
      hosts.set(name, addresses)
      if (searchSuffix === "") continue
      const expanded = `${name}.${searchSuffix}`
      // `reviews` + `default.svc.cluster.local` is a name of the entry already, not an alias
      if (!names.has(expanded)) aliases.set(expanded, name)
    }
  }
  // a real host wins over an alias of the same spelling
  for (const name of hosts.keys()) aliases.delete(name)
  return { hosts, aliases, wildcards, searchSuffix }
}

/** The most specific wildcard covering `name` (never `name` itself). */
const wildcardFor = (table: LookupTable, name: string): Addresses | undefined => {
  if (table.wildcards.size === 0) return undefined
  for (let dot = name.indexOf("."); dot >= 0; dot = name.indexOf(".", dot + 1)) {
    const found = table.wildcards.get(name.slice(dot + 1))
    if (found !== undefined) return found
  }
  return undefined
}

const addressRecords = (name: string, addresses: Addresses, qtype: string): Array<TableRecord> => {
  const list = qtype === "A" ? addresses.v4 : qtype === "AAAA" ? addresses.v6 : []
  return list.map((data) => ({ name, type: qtype as RecordType, ttl: DNS_TTL_SECONDS, data }))
}

const cname = (name: string, target: string): TableRecord => ({
  name,
  type: "CNAME",
  ttl: DNS_TTL_SECONDS,
  data: target,
})

/**
 * The answer records for a question, or undefined when the name is not the mesh's (the proxy
 * forwards it). A known name without records of the asked type answers empty (NOERROR, no data):
 * a host with only IPv4 addresses has no AAAA, but it exists.
 */
export const lookup = (table: LookupTable, qname: string, qtype: string): ReadonlyArray<TableRecord> | undefined => {
  const name = normalizeName(qname)
  const exact = table.hosts.get(name)
  if (exact !== undefined) return addressRecords(name, exact, qtype)
  const aliasOf = table.aliases.get(name)
  if (aliasOf !== undefined) {
    return [cname(name, aliasOf), ...addressRecords(aliasOf, table.hosts.get(aliasOf)!, qtype)]
  }
  const wildcard = wildcardFor(table, name)
  if (wildcard !== undefined) return addressRecords(name, wildcard, qtype)
  const suffix = table.searchSuffix
  if (suffix !== "" && name.endsWith(`.${suffix}`)) {
    const bare = name.slice(0, -(suffix.length + 1))
    const bareWildcard = table.hosts.has(bare) ? undefined : wildcardFor(table, bare)
    if (bareWildcard !== undefined) return [cname(name, bare), ...addressRecords(bare, bareWildcard, qtype)]
  }
  return undefined
}

/** Number of names the table answers (exact, aliases, wildcards). */
export const tableSize = (table: LookupTable): number => table.hosts.size + table.aliases.size + table.wildcards.size
