/**
 * NDS: the name table of the agent's DNS proxy, built as the reference builds it, for sidecars
 * that capture DNS (metadata `DNS_CAPTURE`): every host of the proxy's scope with
 * - its VIPs (those of the service's definition in the proxy's cluster when several clusters
 *   define the host), else the mesh-allocated ones when the proxy asks for them
 *   (`DNS_AUTO_ALLOCATE`);
 * - a wildcard host (`*.example.com`) keeps its key as is, and the agent answers every name below
 *   it; it only ever gets the addresses its entry gives (the reference never allocates one for a
 *   wildcard, so a mesh-allocated address is not the wildcard's), else its headless endpoints;
 * - without a VIP, for a headless service (resolution NONE), the addresses of its healthy
 *   endpoints on any of its ports (each address once), from every cluster but only on the
 *   proxy's network (cross-network addresses are unreachable without the gateway, which
 *   passthrough traffic does not use); a host with no address at all is left out (the agent
 *   forwards the query);
 * - for orchestrator services (not their multi-cluster `*.svc.clusterset.local` hosts, whose short
 *   forms would clash with the cluster-local service's), the service's name and namespace: the
 *   agent derives `name`, `name.namespace` and `name.namespace.svc` from them, as the reference's
 *   agent does (the table carries no alt_hosts, as the reference's does not);
 *
 * One resource named "" (the reference's name), keyed by its own content: proxies whose tables
 * are equal share one encoding, and the table is built once per push for each distinct scope.
 */
import { isIP } from "node:net"
import { isWildcardHost, type Service } from "../../../registry/model.js"
import { ORCHESTRATOR_REGISTRY } from "../../../registry/orchestrator/service.js"
import type { ResourceSpec } from "../../cache/resource-spec.js"
import { type Generated, noNotices } from "../../grpcgen/generator-notices.js"
import type { LocalSlot } from "../../model/local-slot.js"
import { digest, type PushContext } from "../../model/push-context.js"
import type { NameTable as NameTableMessage } from "../../protocol/xds-types.js"
import type { ProxySubscription } from "../contract.js"
import type { ProxyView } from "../proxy-view.js"
import { proxyScope } from "../scope.js"
import { NameTableType } from "../well-known.js"

/** The resource type URL (our package; the reference's is `istio.networking.nds.v1.NameTable`). */
export const NAME_TABLE_TYPE = NameTableType
/** The one NDS resource's name. */
export const NAME_TABLE_RESOURCE = ""
/** Multi-cluster service hosts: their entries are not given short forms (they would clash). */
const CLUSTERSET_SUFFIX = ".clusterset.local"

export type NameInfo = {
  readonly ips: ReadonlyArray<string>
  readonly registry: string
  readonly shortname?: string
  readonly namespace?: string
  readonly alt_hosts?: ReadonlyArray<string>
}

/** The NameTable message in proto-loader's object form (every field set; a `NameTableMessage`). */
export type NameTable = {
  readonly table: Readonly<Record<string, NameInfo>>
}

const truthy = (value: unknown): boolean => value === true || value === "true" || value === "1" || value === "TRUE"

/** Whether the proxy wants VIPs the mesh allocated for ServiceEntries without addresses. */
export const wantsAutoAllocation = (proxy: ProxyView): boolean => truthy(proxy.metadata.DNS_AUTO_ALLOCATE)

/** A plain IP (not a CIDR, not the unspecified address, which marks a service without a VIP). */
const usableIp = (address: string): boolean => isIP(address) !== 0 && address !== "0.0.0.0" && address !== "::"

const sameOrEmpty = (a: string, b: string): boolean => a === "" || b === "" || a === b

// Per push: the definitions of each host by cluster, for cluster-specific VIPs.
const definitions: LocalSlot<ReadonlyMap<string, ReadonlyArray<Service>>, PushContext> = {
  make: (push) => {
    const byHost = new Map<string, Array<Service>>()
    for (const service of push.input.services) {
      const list = byHost.get(service.hostname)
      if (list === undefined) byHost.set(service.hostname, [service])
      else list.push(service)
    }
    return byHost
  },
}

const definitionsOf = (push: PushContext): ReadonlyMap<string, ReadonlyArray<Service>> => push.local(definitions)

/**
 * The addresses the service's own definition gives: the registry puts mesh-allocated addresses
 * into `addresses` too, and a wildcard host must not answer with those.
 */
const explicitAddresses = (service: Service): ReadonlyArray<string> =>
  service.autoAllocatedAddresses.length === 0
    ? service.addresses
    : service.addresses.filter((address) => !service.autoAllocatedAddresses.includes(address))

/** The service's VIPs as the proxy's cluster defines them. */
const vipsFor = (push: PushContext, service: Service, proxy: ProxyView, autoAllocate: boolean): Array<string> => {
  const wildcard = isWildcardHost(service.hostname)
  const addressesOf = (s: Service): ReadonlyArray<string> => (wildcard ? explicitAddresses(s) : s.addresses)
  const local =
    proxy.clusterId === ""
      ? undefined
      : definitionsOf(push)
          .get(service.hostname)
          ?.find((s) => s.clusterId === proxy.clusterId && addressesOf(s).length > 0)
  const given = addressesOf(local ?? service).filter(usableIp)
  if (given.length > 0) return given
  return autoAllocate && !wildcard ? service.autoAllocatedAddresses.filter(usableIp) : []
}

/** `*` alone matches every host: no DNS name to answer for (the agent would hold it as a plain name). */
const isMatchAll = (hostname: string): boolean => hostname === "*"

const headlessAddresses = (push: PushContext, service: Service, proxy: ProxyView): Array<string> => {
  if (service.resolution !== "NONE" || service.ports.length === 0) return []
  const ports = new Set(service.ports.map((p) => p.name))
  const out = new Set<string>()
  for (const endpoint of push.endpointsByHost.get(service.hostname) ?? []) {
    if (!ports.has(endpoint.servicePortName)) continue
    // draining endpoints are not answered either (the reference keeps healthy ones only)
    if (endpoint.healthStatus !== "HEALTHY" || !usableIp(endpoint.address)) continue
    if (!sameOrEmpty(endpoint.network, proxy.network)) continue
    out.add(endpoint.address)
  }
  return [...out]
}

/** The orchestrator service's own name: from its source (`Service/<ns>/<name>`), else its host. */
const orchestratorName = (service: Service, domainSuffix: string): string | undefined => {
  const source = service.source ?? ""
  if (source.startsWith("Service/")) {
    const name = source.slice(source.lastIndexOf("/") + 1)
    if (name !== "") return name
  }
  const suffix = `.${service.namespace}.svc.${domainSuffix}`
  return service.hostname.endsWith(suffix) ? service.hostname.slice(0, -suffix.length) : undefined
}

const nameInfo = (service: Service, ips: ReadonlyArray<string>, domainSuffix: string): NameInfo => {
  const name =
    service.registry === ORCHESTRATOR_REGISTRY && !service.hostname.endsWith(CLUSTERSET_SUFFIX)
      ? orchestratorName(service, domainSuffix)
      : undefined
  if (name === undefined) return { ips, registry: service.registry }
  return { ips, registry: service.registry, shortname: name, namespace: service.namespace }
}

/** The name table of `proxy` (its scope's hosts). */
export const buildNameTable = (push: PushContext, proxy: ProxyView): NameTable => {
  const autoAllocate = wantsAutoAllocation(proxy)
  const table: Record<string, NameInfo> = {}
  for (const service of proxyScope(push, proxy).services) {
    if (isMatchAll(service.hostname)) continue
    const vips = vipsFor(push, service, proxy, autoAllocate)
    const ips = vips.length > 0 ? vips : headlessAddresses(push, service, proxy)
    if (ips.length === 0) continue
    table[service.hostname] = nameInfo(service, ips, push.options.domainSuffix)
  }
  return { table }
}

// Per push, per (scope, network, cluster, auto allocation): the table and its digest.
const tables: LocalSlot<Map<string, { readonly table: NameTable; readonly key: string }>, PushContext> = {
  make: () => new Map(),
}

/** The NDS resource for `proxy`: none unless it is a sidecar capturing DNS. */
export const generateNameTable = (push: PushContext, proxy: ProxyView): Generated<NameTableMessage> => {
  if (proxy.kind !== "sidecar" || !proxy.dnsCapture) return { resources: [], warnings: noNotices }
  const byScope = push.local(tables)
  const memoKey = JSON.stringify([
    proxyScope(push, proxy).key,
    proxy.network,
    proxy.clusterId,
    wantsAutoAllocation(proxy),
  ])
  let entry = byScope.get(memoKey)
  if (entry === undefined) {
    const table = buildNameTable(push, proxy)
    entry = { table, key: `nds|${digest(JSON.stringify(table))}` }
    byScope.set(memoKey, entry)
  }
  const { table, key } = entry
  const spec: ResourceSpec<NameTableMessage> = { name: NAME_TABLE_RESOURCE, key, build: () => table }
  return { resources: [spec], warnings: noNotices }
}

/** `generateNameTable` as a ProxyGenerator. */
export const nameTableGenerator = (push: PushContext, sub: ProxySubscription): Generated<NameTableMessage> =>
  generateNameTable(push, sub.proxy)
