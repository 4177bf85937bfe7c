/**
 * The orchestrator registry's incremental state: the informers' objects go in as events, and
 * `snapshot()` gives the registry snapshot after them, recomputing only what they touched:
 * - a Service change re-converts that service (and its endpoint units if it changed);
 * - an EndpointSlice / Endpoints change rebuilds that unit;
 * - a pod change rebuilds the units that referenced it (by `targetRef` or address) — and only
 *   when what endpoints take from it (labels, account, node, addresses) changed;
 * - a node change rebuilds the units of its pods, only when its locality changed;
 * - the system namespace's network label, the trust domain: everything.
 * Unchanged services and endpoint lists keep their object identity from snapshot to snapshot,
 * so `diffSnapshots` compares references, not contents, for all but what changed.
 *
 * Owned by one caller (not thread-safe by design: the layer feeds it from one fiber).
 */
import type { ConfigResource } from "../../config-model/resource.js"
import type { ServiceEntrySpec } from "../../config-model/schemas/service-entry.js"
import type { WorkloadEntrySpec } from "../../config-model/schemas/workload-entry.js"
import { deepEqual } from "../../config-store/snapshot.js"
import { Labels, SYSTEM_NAMESPACE } from "../../constants.js"
import type { InformerEvent } from "../../orchestrator/informer.js"
import type {
  OrchEndpointSlice,
  OrchEndpoints,
  OrchNamespace,
  OrchNode,
  OrchObject,
  OrchPod,
  OrchService,
} from "../../orchestrator/objects.js"
import type { Endpoint, Service } from "../model.js"
import { RegistrySnapshot } from "../registry.js"
import { selectorMatches } from "../service-entry.js"
import {
  buildUnitEndpoints,
  type EndpointUnit,
  ipRefKey,
  type Normalised,
  normaliseEndpoints,
  normaliseSlice,
  podRefKey,
  type UnitBuildContext,
  type UnitResult,
} from "./endpoints.js"
import {
  type PodSelectingHost,
  podEndpointsForHost,
  podSelectingHosts,
  type SelectionContext,
  workloadEntryEndpoints,
} from "./selection.js"
import { type ConvertedService, convertService, externalNameEndpoints } from "./service.js"
import { nodeLocality, podAddresses, podIsReady, type WorkloadMeta, workloadMeta } from "./workload.js"

export interface OrchestratorStateOptions {
  /** `CLUSTER_ID`. */
  readonly clusterId: string
  /** `--domain`. */
  readonly domain: string
  /** The mesh's trust domain (changes through `setTrustDomain`). */
  readonly trustDomain: string
  /** `PILOT_DRAINING_LABEL`; "" disables. */
  readonly drainingLabel: string
  /** `PILOT_SEND_UNHEALTHY_ENDPOINTS`. */
  readonly sendUnhealthyEndpoints: boolean
  /** `PILOT_ENABLE_ORCH_SELECT_WORKLOAD_ENTRIES`. */
  readonly selectWorkloadEntries: boolean
  /** `PILOT_ENABLE_SERVICEENTRY_SELECT_PODS`. */
  readonly selectPods: boolean
  /** Namespace whose `topology.mesh.io/network` label names the cluster's network. */
  readonly systemNamespace?: string
}

export interface OrchestratorStats {
  /** Endpoint addresses whose pod is not known (`endpoint_no_pod`). */
  readonly endpointsNoPod: number
  /** Endpoint addresses found not ready (`pilot_endpoint_not_ready`). */
  readonly endpointsNotReady: number
}

interface UnitEntry extends UnitResult {
  readonly serviceKey: string
}

interface MetaEntry {
  readonly pod: OrchPod
  readonly node: OrchNode | undefined
  readonly epoch: number
  readonly meta: WorkloadMeta
}

const metaKey = (o: OrchObject): string | undefined => {
  const m = o?.metadata as Partial<OrchObject["metadata"]> | undefined
  if (typeof m?.name !== "string" || m.name === "") return undefined
  return typeof m.namespace === "string" && m.namespace !== "" ? `${m.namespace}/${m.name}` : m.name
}

const addTo = <K, V>(map: Map<K, Set<V>>, key: K, value: V) => {
  const set = map.get(key)
  if (set === undefined) map.set(key, new Set([value]))
  else set.add(value)
}
const removeFrom = <K, V>(map: Map<K, Set<V>>, key: K, value: V) => {
  const set = map.get(key)
  if (set === undefined) return
  set.delete(value)
  if (set.size === 0) map.delete(key)
}

const hostKeyOf = (c: ConvertedService): string => `${c.service.namespace}/${c.service.hostname}`

/** What endpoints take from a pod: a change elsewhere in the pod (status, probes) is ignored. */
const podView = (pod: OrchPod | undefined) =>
  pod === undefined
    ? undefined
    : {
        labels: pod.metadata.labels ?? {},
        serviceAccount: pod.spec?.serviceAccountName,
        node: pod.spec?.nodeName,
        addresses: podAddresses(pod),
      }

/** What ServiceEntry pod selection takes from a pod, beyond podView. */
const podSelectionView = (pod: OrchPod | undefined) =>
  pod === undefined ? undefined : { ready: podIsReady(pod), containers: pod.spec?.containers }

export class OrchestratorRegistryState {
  private readonly options: OrchestratorStateOptions
  private readonly systemNamespace: string
  private trustDomain: string
  private defaultNetwork = ""
  /** Bumped whenever every pod's derived metadata is stale. */
  private epoch = 0

  private readonly services = new Map<string, OrchService>()
  private readonly servicesByNamespace = new Map<string, Set<string>>()
  private readonly units = new Map<string, EndpointUnit>()
  private readonly unitsByService = new Map<string, Set<string>>()
  private readonly pods = new Map<string, OrchPod>()
  private readonly podByIp = new Map<string, string>()
  private readonly podsByNode = new Map<string, Set<string>>()
  private readonly podsByNamespace = new Map<string, Set<string>>()
  private readonly nodes = new Map<string, OrchNode>()
  private workloadEntries: ReadonlyArray<ConfigResource<WorkloadEntrySpec>> = []
  private workloadEntriesByNamespace = new Map<string, ReadonlyArray<ConfigResource<WorkloadEntrySpec>>>()
  private serviceEntries: ReadonlyArray<ConfigResource<ServiceEntrySpec>> = []
  private seHosts: ReadonlyMap<string, PodSelectingHost> = new Map()
  private readonly seHostsByNamespace = new Map<string, Set<string>>()

  private readonly converted = new Map<string, ConvertedService>()
  private readonly unitResults = new Map<string, UnitEntry>()
  /** Pod reference key → units that consulted it. */
  private readonly refIndex = new Map<string, Set<string>>()
  private readonly metaCache = new Map<string, MetaEntry>()
  /** `namespace/hostname` → endpoints of the orchestrator service of that host. */
  private readonly serviceEndpoints = new Map<string, ReadonlyArray<Endpoint>>()
  /** `namespace/hostname` → endpoints of pods a ServiceEntry host selects. */
  private readonly seEndpoints = new Map<string, ReadonlyArray<Endpoint>>()
  private noPod = 0
  private notReady = 0

  private readonly dirtyServices = new Set<string>()
  private readonly dirtyUnits = new Set<string>()
  private readonly dirtyAssembly = new Set<string>()
  private readonly dirtySeHosts = new Set<string>()

  private current = RegistrySnapshot.empty
  private problems: Array<string> = []

  constructor(options: OrchestratorStateOptions) {
    this.options = options
    this.trustDomain = options.trustDomain
    this.systemNamespace = options.systemNamespace ?? SYSTEM_NAMESPACE
  }

  // ---- inputs -------------------------------------------------------------------------------

  applyServices(events: ReadonlyArray<InformerEvent<OrchService>>): void {
    for (const { type, object } of events) {
      const key = metaKey(object)
      if (key === undefined || !key.includes("/")) {
        this.problem(`Service ${key ?? "<unnamed>"}: metadata.name and metadata.namespace are required`)
        continue
      }
      const namespace = key.slice(0, key.indexOf("/"))
      if (type === "deleted") {
        this.services.delete(key)
        removeFrom(this.servicesByNamespace, namespace, key)
      } else {
        this.services.set(key, object)
        addTo(this.servicesByNamespace, namespace, key)
      }
      this.dirtyServices.add(key)
    }
  }

  applyEndpointSlices(events: ReadonlyArray<InformerEvent<OrchEndpointSlice>>): void {
    this.applyUnits("EndpointSlice", events, normaliseSlice)
  }

  applyEndpoints(events: ReadonlyArray<InformerEvent<OrchEndpoints>>): void {
    this.applyUnits("Endpoints", events, normaliseEndpoints)
  }

  applyPods(events: ReadonlyArray<InformerEvent<OrchPod>>): void {
    for (const { type, object } of events) {
      const key = metaKey(object)
      if (key === undefined || !key.includes("/")) {
        this.problem(`Pod ${key ?? "<unnamed>"}: metadata.name and metadata.namespace are required`)
        continue
      }
      const before = this.pods.get(key)
      const after = type === "deleted" ? undefined : object
      this.indexPod(key, before, after)
      // A pod that appears or goes always matters; only an update is compared (the first list
      // is all additions: 10,000 pods need no views compared).
      const relevant =
        before === undefined || after === undefined ? before !== after : !deepEqual(podView(before), podView(after))
      if (relevant) this.touchPod(key, before, after)
      if (this.options.selectPods) {
        const namespace = key.slice(0, key.indexOf("/"))
        if (relevant || !deepEqual(podSelectionView(before), podSelectionView(after)))
          this.touchSelectingHosts(namespace, [before, after])
      }
    }
  }

  applyNodes(events: ReadonlyArray<InformerEvent<OrchNode>>): void {
    for (const { type, object } of events) {
      const name = metaKey(object)
      if (name === undefined) {
        this.problem("Node <unnamed>: metadata.name is required")
        continue
      }
      const before = this.nodes.get(name)
      const after = type === "deleted" ? undefined : object
      if (after === undefined) this.nodes.delete(name)
      else this.nodes.set(name, after)
      if (nodeLocality(before) === nodeLocality(after)) continue
      for (const podKey of this.podsByNode.get(name) ?? []) {
        const pod = this.pods.get(podKey)
        this.touchPod(podKey, pod, pod)
        if (this.options.selectPods && pod !== undefined)
          this.touchSelectingHosts(podKey.slice(0, podKey.indexOf("/")), [pod])
      }
    }
  }

  applyNamespaces(events: ReadonlyArray<InformerEvent<OrchNamespace>>): void {
    for (const { type, object } of events) {
      if (metaKey(object) !== this.systemNamespace) continue
      const network = type === "deleted" ? "" : (object.metadata.labels?.[Labels.network] ?? "")
      if (network !== this.defaultNetwork) {
        this.defaultNetwork = network
        this.invalidateAll()
      }
    }
  }

  /** The ConfigStore's ServiceEntries and WorkloadEntries (unchanged arrays cost nothing). */
  setConfig(
    serviceEntries: ReadonlyArray<ConfigResource<ServiceEntrySpec>>,
    workloadEntries: ReadonlyArray<ConfigResource<WorkloadEntrySpec>>,
  ): void {
    if (workloadEntries !== this.workloadEntries) {
      this.workloadEntries = workloadEntries
      const byNamespace = new Map<string, Array<ConfigResource<WorkloadEntrySpec>>>()
      for (const we of workloadEntries) {
        const list = byNamespace.get(we.meta.namespace)
        if (list === undefined) byNamespace.set(we.meta.namespace, [we])
        else list.push(we)
      }
      const previous = this.workloadEntriesByNamespace
      this.workloadEntriesByNamespace = byNamespace
      if (this.options.selectWorkloadEntries) {
        for (const namespace of new Set([...previous.keys(), ...byNamespace.keys()])) {
          const a = previous.get(namespace) ?? []
          const b = byNamespace.get(namespace) ?? []
          if (a.length === b.length && a.every((we, i) => we === b[i])) continue
          for (const key of this.servicesByNamespace.get(namespace) ?? []) this.dirtyAssembly.add(key)
        }
      }
    }
    if (serviceEntries !== this.serviceEntries) {
      this.serviceEntries = serviceEntries
      const hosts = this.options.selectPods ? podSelectingHosts(serviceEntries) : new Map<string, PodSelectingHost>()
      for (const key of new Set([...this.seHosts.keys(), ...hosts.keys()]))
        if (!deepEqual(this.seHosts.get(key), hosts.get(key))) this.dirtySeHosts.add(key)
      this.seHosts = hosts
      this.seHostsByNamespace.clear()
      for (const [key, host] of hosts) addTo(this.seHostsByNamespace, host.namespace, key)
    }
  }

  setTrustDomain(trustDomain: string): void {
    if (trustDomain === this.trustDomain) return
    this.trustDomain = trustDomain
    this.invalidateAll()
  }

  // ---- outputs ------------------------------------------------------------------------------

  get stats(): OrchestratorStats {
    return { endpointsNoPod: this.noPod, endpointsNotReady: this.notReady }
  }

  /** Problems found in objects since the last call (for the log), each naming the object. */
  takeProblems(): ReadonlyArray<string> {
    const out = this.problems
    this.problems = []
    return out
  }

  /** Whether events are waiting to be folded into the snapshot. */
  get dirty(): boolean {
    return this.dirtyServices.size + this.dirtyUnits.size + this.dirtyAssembly.size + this.dirtySeHosts.size > 0
  }

  /**
   * The snapshot after every event so far (version 0: the registry core numbers them). The same
   * object when nothing visible changed; otherwise new maps sharing every unchanged entry.
   */
  snapshot(): RegistrySnapshot {
    if (!this.dirty) return this.current
    const touched = new Set<string>()
    let services: Map<string, Service> | undefined

    const servicesOut = () => {
      services ??= new Map(this.current.servicesByKey)
      return services
    }

    // 1. Services.
    for (const key of this.dirtyServices) {
      const object = this.services.get(key)
      const previous = this.converted.get(key)
      if (object === undefined) {
        if (previous === undefined) continue
        this.converted.delete(key)
        const hostKey = hostKeyOf(previous)
        servicesOut().delete(hostKey)
        this.serviceEndpoints.delete(hostKey)
        touched.add(hostKey)
        for (const unit of this.unitsByService.get(key) ?? []) this.dirtyUnits.add(unit)
        continue
      }
      const result = convertService(object, {
        clusterId: this.options.clusterId,
        domain: this.options.domain,
        trustDomain: this.trustDomain,
      })
      if ("problem" in result) {
        this.problem(`Service ${key}: ${result.problem}`)
        continue
      }
      for (const p of result.problems) this.problem(`Service ${key}: ${p}`)
      if (
        previous !== undefined &&
        previous.externalName === result.externalName &&
        deepEqual(previous.service, result.service) &&
        deepEqual([...previous.namedTargetPorts], [...result.namedTargetPorts])
      )
        continue
      this.converted.set(key, result)
      servicesOut().set(hostKeyOf(result), result.service)
      for (const unit of this.unitsByService.get(key) ?? []) this.dirtyUnits.add(unit)
      this.dirtyAssembly.add(key)
    }
    this.dirtyServices.clear()

    // 2. Endpoint units (slices / Endpoints objects).
    const context = this.unitContext()
    for (const unitKey of this.dirtyUnits) {
      const old = this.unitResults.get(unitKey)
      if (old !== undefined) {
        for (const ref of old.refs) removeFrom(this.refIndex, ref, unitKey)
        this.noPod -= old.noPod
        this.notReady -= old.notReady
        this.unitResults.delete(unitKey)
        this.dirtyAssembly.add(old.serviceKey)
      }
      const unit = this.units.get(unitKey)
      if (unit === undefined) continue
      const serviceKey = `${unit.namespace}/${unit.serviceName}`
      const service = this.converted.get(serviceKey)
      // Without its service (yet) a unit gives nothing; the service's arrival rebuilds it.
      if (service === undefined || service.externalName !== undefined) continue
      const result = buildUnitEndpoints(unit, service.service, context)
      this.unitResults.set(unitKey, { ...result, serviceKey })
      for (const ref of result.refs) addTo(this.refIndex, ref, unitKey)
      this.noPod += result.noPod
      this.notReady += result.notReady
      this.dirtyAssembly.add(serviceKey)
    }
    this.dirtyUnits.clear()

    // 3. Each touched service's endpoint list.
    for (const key of this.dirtyAssembly) {
      const service = this.converted.get(key)
      if (service === undefined) continue
      const hostKey = hostKeyOf(service)
      const next = this.assemble(key, service)
      const previous = this.serviceEndpoints.get(hostKey)
      if (next.length === 0) {
        if (previous === undefined) continue
        this.serviceEndpoints.delete(hostKey)
      } else if (previous !== undefined && deepEqual(previous, next)) continue
      else this.serviceEndpoints.set(hostKey, next)
      touched.add(hostKey)
    }
    this.dirtyAssembly.clear()

    // 4. Pods selected by ServiceEntry hosts.
    for (const hostKey of this.dirtySeHosts) {
      const host = this.seHosts.get(hostKey)
      const next = host === undefined ? [] : this.podEndpoints(host)
      const previous = this.seEndpoints.get(hostKey)
      if (next.length === 0) {
        if (previous === undefined) continue
        this.seEndpoints.delete(hostKey)
      } else if (previous !== undefined && deepEqual(previous, next)) continue
      else this.seEndpoints.set(hostKey, next)
      touched.add(hostKey)
    }
    this.dirtySeHosts.clear()

    // 5. Publish.
    let endpoints: Map<string, ReadonlyArray<Endpoint>> | undefined
    for (const hostKey of touched) {
      const own = this.serviceEndpoints.get(hostKey)
      const selected = this.seEndpoints.get(hostKey)
      const merged = own !== undefined && selected !== undefined ? [...own, ...selected] : (own ?? selected)
      const before = this.current.endpointsByKey.get(hostKey)
      if (merged === before) continue
      endpoints ??= new Map(this.current.endpointsByKey)
      if (merged === undefined) endpoints.delete(hostKey)
      else endpoints.set(hostKey, merged)
    }
    if (services !== undefined || endpoints !== undefined) {
      this.current = new RegistrySnapshot(
        0,
        services ?? this.current.servicesByKey,
        endpoints ?? this.current.endpointsByKey,
      )
    }
    return this.current
  }

  // ---- internals ----------------------------------------------------------------------------

  private problem(message: string) {
    // Bounded: a flood of bad objects between two reads keeps the first hundred.
    if (this.problems.length < 100) this.problems.push(message)
  }

  private applyUnits<T extends OrchObject>(
    kind: string,
    events: ReadonlyArray<InformerEvent<T>>,
    normalise: (o: T) => Normalised,
  ) {
    for (const { type, object } of events) {
      const key = metaKey(object)
      if (key === undefined || !key.includes("/")) {
        this.problem(`${kind} ${key ?? "<unnamed>"}: metadata.name and metadata.namespace are required`)
        continue
      }
      const unitKey = `${kind}/${key}`
      const previous = this.units.get(unitKey)
      let next: EndpointUnit | undefined
      if (type !== "deleted") {
        const n = normalise(object)
        if ("problem" in n) {
          // Last good state wins: the unit keeps what it had.
          this.problem(`${kind} ${key}: ${n.problem}`)
          continue
        }
        next = "ignored" in n ? undefined : n
      }
      if (previous !== undefined)
        removeFrom(this.unitsByService, `${previous.namespace}/${previous.serviceName}`, unitKey)
      if (next === undefined) this.units.delete(unitKey)
      else {
        this.units.set(unitKey, next)
        addTo(this.unitsByService, `${next.namespace}/${next.serviceName}`, unitKey)
      }
      if (previous !== undefined || next !== undefined) this.dirtyUnits.add(unitKey)
    }
  }

  private indexPod(key: string, before: OrchPod | undefined, after: OrchPod | undefined) {
    const namespace = key.slice(0, key.indexOf("/"))
    if (before !== undefined) {
      for (const ip of podAddresses(before)) if (this.podByIp.get(ip) === key) this.podByIp.delete(ip)
      const node = before.spec?.nodeName
      if (node !== undefined) removeFrom(this.podsByNode, node, key)
    }
    if (after === undefined) {
      this.pods.delete(key)
      this.metaCache.delete(key)
      removeFrom(this.podsByNamespace, namespace, key)
      return
    }
    this.pods.set(key, after)
    addTo(this.podsByNamespace, namespace, key)
    for (const ip of podAddresses(after)) this.podByIp.set(ip, key)
    const node = after.spec?.nodeName
    if (node !== undefined) addTo(this.podsByNode, node, key)
  }

  /** Marks the units that consulted a pod (by name or by any of its addresses). */
  private touchPod(key: string, before: OrchPod | undefined, after: OrchPod | undefined) {
    // No unit built yet (the first publish): none consulted anything.
    if (this.refIndex.size === 0) return
    const slash = key.indexOf("/")
    const refs = [podRefKey(key.slice(0, slash), key.slice(slash + 1))]
    for (const ip of new Set([...podAddresses(before), ...podAddresses(after)])) refs.push(ipRefKey(ip))
    for (const ref of refs) for (const unit of this.refIndex.get(ref) ?? []) this.dirtyUnits.add(unit)
  }

  private touchSelectingHosts(namespace: string, pods: ReadonlyArray<OrchPod | undefined>) {
    for (const hostKey of this.seHostsByNamespace.get(namespace) ?? []) {
      const host = this.seHosts.get(hostKey)
      if (host === undefined) continue
      if (pods.some((p) => p !== undefined && selectorMatches(host.selector, p.metadata.labels ?? {})))
        this.dirtySeHosts.add(hostKey)
    }
  }

  private invalidateAll() {
    this.epoch++
    for (const key of this.services.keys()) this.dirtyServices.add(key)
    for (const key of this.converted.keys()) this.dirtyAssembly.add(key)
    for (const key of this.units.keys()) this.dirtyUnits.add(key)
    for (const key of this.seHosts.keys()) this.dirtySeHosts.add(key)
  }

  private meta = (pod: OrchPod): WorkloadMeta => {
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`
    const nodeName = pod.spec?.nodeName
    const node = nodeName !== undefined ? this.nodes.get(nodeName) : undefined
    const cached = this.metaCache.get(key)
    if (cached !== undefined && cached.pod === pod && cached.node === node && cached.epoch === this.epoch)
      return cached.meta
    const meta = workloadMeta(pod, node, {
      trustDomain: this.trustDomain,
      clusterId: this.options.clusterId,
      defaultNetwork: this.defaultNetwork,
    })
    this.metaCache.set(key, { pod, node, epoch: this.epoch, meta })
    return meta
  }

  private unitContext(): UnitBuildContext {
    return {
      clusterId: this.options.clusterId,
      sendUnhealthyEndpoints: this.options.sendUnhealthyEndpoints,
      drainingLabel: this.options.drainingLabel,
      defaultNetwork: this.defaultNetwork,
      meta: this.meta,
      pod: (ref) => {
        if (ref.startsWith("pod:")) return this.pods.get(ref.slice(4))
        const key = this.podByIp.get(ref.slice(3))
        return key === undefined ? undefined : this.pods.get(key)
      },
    }
  }

  private selectionContext(): SelectionContext {
    return {
      clusterId: this.options.clusterId,
      trustDomain: this.trustDomain,
      drainingLabel: this.options.drainingLabel,
    }
  }

  /** A service's endpoints: its units' (one per address and port across slices), then its WorkloadEntries'. */
  private assemble(key: string, service: ConvertedService): ReadonlyArray<Endpoint> {
    if (service.externalName !== undefined)
      return externalNameEndpoints(service.service, service.externalName, this.options.clusterId)
    const unitKeys = [...(this.unitsByService.get(key) ?? [])].sort()
    const lists: Array<ReadonlyArray<Endpoint>> = []
    for (const unitKey of unitKeys) {
      const result = this.unitResults.get(unitKey)
      if (result !== undefined && result.endpoints.length > 0) lists.push(result.endpoints)
    }
    const selected = this.options.selectWorkloadEntries
      ? workloadEntryEndpoints(
          service.service,
          this.workloadEntriesByNamespace.get(service.service.namespace) ?? [],
          this.selectionContext(),
        )
      : []
    if (lists.length === 1 && selected.length === 0) return lists[0] ?? []
    // An address moving between slices may briefly appear in both: keep it once.
    const seen = new Set<string>()
    const out: Array<Endpoint> = []
    for (const list of lists) {
      for (const e of list) {
        const id = `${e.address}|${e.servicePortName}`
        if (seen.has(id)) continue
        seen.add(id)
        out.push(e)
      }
    }
    out.push(...selected)
    return out
  }

  private podEndpoints(host: PodSelectingHost): ReadonlyArray<Endpoint> {
    const pods: Array<OrchPod> = []
    for (const key of this.podsByNamespace.get(host.namespace) ?? []) {
      const pod = this.pods.get(key)
      if (pod !== undefined) pods.push(pod)
    }
    pods.sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0))
    return podEndpointsForHost(host, pods, this.meta, this.selectionContext())
  }
}
