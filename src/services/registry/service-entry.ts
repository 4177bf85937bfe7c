/**
 * ServiceEntry → services and endpoints, the reference's conversion rules:
 * - one service per host (its addresses are the entry's addresses; a /32 or /128 CIDR becomes a
 *   plain address), with the entry's ports, resolution, location, exportTo and labels;
 * - endpoints: the entry's static `endpoints`; or, with a `workloadSelector`, the WorkloadEntries
 *   of the same namespace whose labels match; or, for DNS / DNS_ROUND_ROBIN entries with
 *   neither, one endpoint per port whose address is the host itself;
 * - endpoint port: the endpoint's port of the same name, else the service port's `targetPort`,
 *   else the service port number; `unix://` endpoints have port 0;
 * - two entries of one namespace defining one host: the older entry (creation time, then name)
 *   wins, the other definition of that host is ignored and reported;
 * - services without addresses get auto-allocated ones (see auto-allocate.ts) unless the host
 *   is a wildcard with resolution NONE (or DYNAMIC_DNS, resolved per request) or the entry opts out with the label
 *   `networking.mesh.io/enable-autoallocate-ip: "false"`.
 */
import type { ConfigResource } from "../config-model/resource.js"
import { resourceKey } from "../config-model/resource.js"
import type { ServiceEntrySpec } from "../config-model/schemas/service-entry.js"
import type { WorkloadEntrySpec } from "../config-model/schemas/workload-entry.js"
import { DEFAULT_CLUSTER_ID, DEFAULT_TRUST_DOMAIN, Labels, spiffeId } from "../constants.js"
import { type Allocation, allocateSlots, emptyAllocation, slotAddresses } from "./auto-allocate.js"
import {
  type Endpoint,
  isWildcardHost,
  type Location,
  parseProtocol,
  type Resolution,
  type Service,
  type ServicePort,
} from "./model.js"

export const SERVICE_ENTRY_REGISTRY = "ServiceEntry"
export const AUTOALLOCATE_LABEL = "networking.mesh.io/enable-autoallocate-ip"
const AUTOALLOCATE_LABEL_UPSTREAM = "networking.istio.io/enable-autoallocate-ip"
const UNIX_PREFIX = "unix://"

export interface ServiceEntryOptions {
  readonly clusterId: string
  readonly trustDomain: string
  /** `PILOT_ENABLE_IP_AUTOALLOCATE`. */
  readonly autoAllocate: boolean
}

export const defaultServiceEntryOptions: ServiceEntryOptions = {
  clusterId: DEFAULT_CLUSTER_ID,
  trustDomain: DEFAULT_TRUST_DOMAIN,
  autoAllocate: true,
}

/** A host defined by more than one ServiceEntry of a namespace. */
export interface HostConflict {
  /** `namespace/hostname`. */
  readonly key: string
  /** `ServiceEntry/namespace/name` of the entry that wins. */
  readonly winner: string
  readonly ignored: ReadonlyArray<string>
}

export interface ServiceEntryConversion {
  readonly services: ReadonlyArray<Service>
  readonly endpoints: ReadonlyArray<Endpoint>
  readonly allocation: Allocation
  readonly conflicts: ReadonlyArray<HostConflict>
}

const upper = <T extends string>(value: string | undefined, fallback: T, allowed: ReadonlyArray<T>): T => {
  const v = (value ?? "").toUpperCase()
  return (allowed as ReadonlyArray<string>).includes(v) ? (v as T) : fallback
}

const resolutionOf = (spec: ServiceEntrySpec): Resolution =>
  upper(spec.resolution, "NONE", ["NONE", "STATIC", "DNS", "DNS_ROUND_ROBIN", "DYNAMIC_DNS"])

const locationOf = (spec: ServiceEntrySpec): Location =>
  upper(spec.location, "MESH_EXTERNAL", ["MESH_EXTERNAL", "MESH_INTERNAL"])

/** An address as a service VIP: a full-length CIDR becomes a plain IP; other CIDRs stay. */
export const normaliseAddress = (address: string): string => {
  const slash = address.indexOf("/")
  if (slash < 0) return address
  const ip = address.slice(0, slash)
  const bits = address.slice(slash + 1)
  return (ip.includes(":") && bits === "128") || (!ip.includes(":") && bits === "32") ? ip : address
}

const portsOf = (spec: ServiceEntrySpec): ReadonlyArray<ServicePort> =>
  (spec.ports ?? []).map((p) => ({
    name: p.name,
    port: p.number,
    protocol: parseProtocol(p.protocol),
    ...(p.targetPort !== undefined && p.targetPort > 0 ? { targetPort: p.targetPort } : {}),
  }))

/** Whether the selector's labels are all present on the workload (an empty selector matches all). */
export const selectorMatches = (
  selector: Readonly<Record<string, string>>,
  labels: Readonly<Record<string, string>>,
): boolean => Object.entries(selector).every(([k, v]) => labels[k] === v)

const endpointFrom = (
  service: Service,
  port: ServicePort,
  entry: WorkloadEntrySpec,
  options: ServiceEntryOptions,
): Endpoint => {
  const address = entry.address ?? ""
  const named = entry.ports?.[port.name]
  const endpointPort = address.startsWith(UNIX_PREFIX)
    ? 0
    : named !== undefined && named > 0
      ? named
      : (port.targetPort ?? port.port)
  const network = entry.network ?? ""
  const labels: Record<string, string> = { ...(entry.labels ?? {}) }
  if (network !== "" && labels[Labels.network] === undefined) labels[Labels.network] = network
  return {
    hostname: service.hostname,
    namespace: service.namespace,
    servicePortName: port.name,
    address,
    port: endpointPort,
    labels,
    serviceAccount:
      entry.serviceAccount !== undefined && entry.serviceAccount !== ""
        ? spiffeId(options.trustDomain, service.namespace, entry.serviceAccount)
        : "",
    locality: entry.locality ?? "",
    network,
    weight: entry.weight !== undefined && entry.weight > 0 ? entry.weight : 1,
    healthStatus: "HEALTHY",
    clusterId: options.clusterId,
  }
}

const compareEntries = (a: ConfigResource, b: ConfigResource): number => {
  const ta = a.meta.creationTimestamp ?? ""
  const tb = b.meta.creationTimestamp ?? ""
  if (ta !== tb) return ta === "" ? 1 : tb === "" ? -1 : ta < tb ? -1 : 1
  if (a.meta.namespace !== b.meta.namespace) return a.meta.namespace < b.meta.namespace ? -1 : 1
  return a.meta.name < b.meta.name ? -1 : a.meta.name > b.meta.name ? 1 : 0
}

const wantsAutoAllocation = (entry: ConfigResource<ServiceEntrySpec>, hostname: string): boolean => {
  const spec = entry.spec
  if ((spec.addresses ?? []).length > 0) return false
  const optOut = entry.meta.labels[AUTOALLOCATE_LABEL] ?? entry.meta.labels[AUTOALLOCATE_LABEL_UPSTREAM]
  if (optOut === "false") return false
  const resolution = resolutionOf(spec)
  return !((resolution === "NONE" || resolution === "DYNAMIC_DNS") && isWildcardHost(hostname))
}

interface CachedHost {
  readonly entry: ConfigResource<ServiceEntrySpec>
  readonly slot: number | undefined
  readonly clusterId: string
  readonly trustDomain: string
  readonly workloads: ReadonlyArray<ConfigResource<WorkloadEntrySpec>>
  readonly service: Service
  readonly endpoints: ReadonlyArray<Endpoint>
}

/**
 * Conversion results kept between calls, by `namespace/hostname`: a host whose entry (the same
 * resource object), address slot, options and selected WorkloadEntries are unchanged reuses its
 * previous service and endpoint objects, so re-converting after a one-entry change costs little
 * and the registry diff sees identical objects. Owned by one caller; mutated by each call.
 */
export type ConversionCache = Map<string, CachedHost>

/**
 * Converts every ServiceEntry (with the WorkloadEntries their selectors may pick) to services
 * and endpoints. `previous` is the last allocation, so addresses stay put across changes;
 * `cache` (optional) lets unchanged hosts reuse their previous results.
 */
export const convertServiceEntries = (
  serviceEntries: ReadonlyArray<ConfigResource<ServiceEntrySpec>>,
  workloadEntries: ReadonlyArray<ConfigResource<WorkloadEntrySpec>>,
  options: ServiceEntryOptions = defaultServiceEntryOptions,
  previous: Allocation = emptyAllocation,
  cache?: ConversionCache,
): ServiceEntryConversion => {
  const ordered = [...serviceEntries].sort(compareEntries)
  const winners = new Map<string, { entry: ConfigResource<ServiceEntrySpec>; ignored: Array<string> }>()
  for (const entry of ordered) {
    for (const hostname of new Set(entry.spec.hosts)) {
      const key = `${entry.meta.namespace}/${hostname}`
      const current = winners.get(key)
      if (current === undefined) winners.set(key, { entry, ignored: [] })
      else current.ignored.push(resourceKey(entry))
    }
  }

  const allocation = options.autoAllocate
    ? allocateSlots(
        [...winners.entries()]
          .filter(([key, { entry }]) => wantsAutoAllocation(entry, key.slice(key.indexOf("/") + 1)))
          .map(([key]) => key),
        previous,
      )
    : emptyAllocation

  const workloadsByNamespace = new Map<string, Array<ConfigResource<WorkloadEntrySpec>>>()
  for (const we of workloadEntries) {
    const list = workloadsByNamespace.get(we.meta.namespace)
    if (list === undefined) workloadsByNamespace.set(we.meta.namespace, [we])
    else list.push(we)
  }

  const services: Array<Service> = []
  const endpoints: Array<Endpoint> = []
  const conflicts: Array<HostConflict> = []
  const seen = new Set<string>()
  for (const [key, { entry, ignored }] of [...winners.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (ignored.length > 0) conflicts.push({ key, winner: resourceKey(entry), ignored })
    seen.add(key)
    const spec = entry.spec
    const selector = spec.workloadSelector?.labels
    // Workload labels: the spec's, overridden by the metadata's (as the reference merges them).
    const selected =
      spec.workloadSelector === undefined
        ? []
        : (workloadsByNamespace.get(entry.meta.namespace) ?? [])
            .map((we) => ({ we, labels: { ...(we.spec.labels ?? {}), ...we.meta.labels } }))
            .filter(({ labels }) => selectorMatches(selector ?? {}, labels))
            .sort((a, b) => compareEntries(a.we, b.we))
    const slot = allocation.slots.get(key)
    const cached = cache?.get(key)
    if (
      cached !== undefined &&
      cached.entry === entry &&
      cached.slot === slot &&
      cached.clusterId === options.clusterId &&
      cached.trustDomain === options.trustDomain &&
      cached.workloads.length === selected.length &&
      cached.workloads.every((we, i) => we === selected[i]?.we)
    ) {
      services.push(cached.service)
      endpoints.push(...cached.endpoints)
      continue
    }
    const hostname = key.slice(key.indexOf("/") + 1)
    const resolution = resolutionOf(spec)
    const given = (spec.addresses ?? []).map(normaliseAddress)
    const auto = slot === undefined ? [] : Object.values(slotAddresses(slot))
    const ports = portsOf(spec)
    const service: Service = {
      hostname,
      namespace: entry.meta.namespace,
      ports,
      addresses: given.length > 0 ? given : auto,
      autoAllocatedAddresses: auto,
      resolution,
      location: locationOf(spec),
      exportTo: spec.exportTo ?? [],
      labels: entry.meta.labels,
      registry: SERVICE_ENTRY_REGISTRY,
      clusterId: options.clusterId,
      ...(spec.subjectAltNames !== undefined ? { serviceAccounts: spec.subjectAltNames } : {}),
      ...(spec.workloadSelector !== undefined ? { selector: selector ?? {} } : {}),
      source: resourceKey(entry),
      ...(entry.meta.creationTimestamp !== undefined ? { creationTimestamp: entry.meta.creationTimestamp } : {}),
    }
    const own: Array<Endpoint> = []
    const staticEndpoints = spec.endpoints ?? []
    if (spec.workloadSelector !== undefined) {
      for (const port of ports) {
        for (const { we, labels } of selected) own.push(endpointFrom(service, port, { ...we.spec, labels }, options))
      }
    } else if (staticEndpoints.length > 0) {
      for (const port of ports) for (const e of staticEndpoints) own.push(endpointFrom(service, port, e, options))
    } else if (resolution === "DNS" || resolution === "DNS_ROUND_ROBIN") {
      for (const port of ports) {
        own.push({
          hostname,
          namespace: service.namespace,
          servicePortName: port.name,
          address: hostname,
          port: port.targetPort ?? port.port,
          labels: {},
          serviceAccount: "",
          locality: "",
          network: "",
          weight: 1,
          healthStatus: "HEALTHY",
          clusterId: options.clusterId,
        })
      }
    }
    services.push(service)
    endpoints.push(...own)
    cache?.set(key, {
      entry,
      slot,
      clusterId: options.clusterId,
      trustDomain: options.trustDomain,
      workloads: selected.map((s) => s.we),
      service,
      endpoints: own,
    })
  }
  if (cache !== undefined) for (const key of [...cache.keys()]) if (!seen.has(key)) cache.delete(key)
  return { services, endpoints, allocation, conflicts }
}
