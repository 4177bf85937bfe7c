/**
 * The ServiceRegistry service: the services and endpoints one source (or the aggregate of all
 * sources) knows, as an immutable snapshot, plus change events naming which services and which
 * endpoint sets changed.
 */
import { Context, type Effect, type Option, type Queue, type Scope, type Stream } from "effect"
import { deepEqual } from "../config-store/snapshot.js"
import { type Endpoint, type Service, serviceKey } from "./model.js"

const compareServices = (a: Service, b: Service): number =>
  a.hostname !== b.hostname
    ? a.hostname < b.hostname
      ? -1
      : 1
    : a.namespace < b.namespace
      ? -1
      : a.namespace > b.namespace
        ? 1
        : 0

const NO_ENDPOINTS: ReadonlyArray<Endpoint> = []

/** An immutable view of services (keyed `namespace/hostname`) and their endpoints. */
export class RegistrySnapshot {
  private sorted: ReadonlyArray<Service> | undefined
  private byHost: ReadonlyMap<string, ReadonlyArray<Service>> | undefined

  constructor(
    readonly version: number,
    /** `namespace/hostname` → service. */
    readonly servicesByKey: ReadonlyMap<string, Service>,
    /** `namespace/hostname` → endpoints of every port. */
    readonly endpointsByKey: ReadonlyMap<string, ReadonlyArray<Endpoint>>,
  ) {}

  static readonly empty = new RegistrySnapshot(0, new Map(), new Map())

  /** Builds a snapshot; the first service of a key wins, endpoints are grouped by key. */
  static make(services: Iterable<Service>, endpoints: Iterable<Endpoint>, version = 0): RegistrySnapshot {
    const byKey = new Map<string, Service>()
    for (const s of services) {
      const key = serviceKey(s)
      if (!byKey.has(key)) byKey.set(key, s)
    }
    const eps = new Map<string, Array<Endpoint>>()
    for (const e of endpoints) {
      const key = serviceKey(e)
      const list = eps.get(key)
      if (list === undefined) eps.set(key, [e])
      else list.push(e)
    }
    return new RegistrySnapshot(version, byKey, eps)
  }

  withVersion(version: number): RegistrySnapshot {
    return new RegistrySnapshot(version, this.servicesByKey, this.endpointsByKey)
  }

  /** Every service, sorted by hostname then namespace. */
  get services(): ReadonlyArray<Service> {
    this.sorted ??= [...this.servicesByKey.values()].sort(compareServices)
    return this.sorted
  }

  /** Services of one hostname (one per namespace defining it), sorted by namespace. */
  servicesByHostname(hostname: string): ReadonlyArray<Service> {
    if (this.byHost === undefined) {
      const map = new Map<string, Array<Service>>()
      for (const s of this.services) {
        const list = map.get(s.hostname)
        if (list === undefined) map.set(s.hostname, [s])
        else list.push(s)
      }
      this.byHost = map
    }
    return this.byHost.get(hostname) ?? []
  }

  service(hostname: string, namespace: string): Service | undefined {
    return this.servicesByKey.get(`${namespace}/${hostname}`)
  }

  /**
   * Endpoints of a service; with `port` (a service port number) only those serving that port.
   */
  endpoints(hostname: string, namespace: string, port?: number): ReadonlyArray<Endpoint> {
    const all = this.endpointsByKey.get(`${namespace}/${hostname}`) ?? NO_ENDPOINTS
    if (port === undefined) return all
    const service = this.service(hostname, namespace)
    const portName = service?.ports.find((p) => p.port === port)?.name
    if (portName === undefined) return NO_ENDPOINTS
    return all.filter((e) => e.servicePortName === portName)
  }
}

/** What changed between two registry snapshots; keys are `namespace/hostname`. */
export interface RegistryDiff {
  readonly servicesAdded: ReadonlyArray<string>
  readonly servicesUpdated: ReadonlyArray<string>
  readonly servicesRemoved: ReadonlyArray<string>
  /** Services whose endpoint set changed (including added/removed services that have endpoints). */
  readonly endpointsChanged: ReadonlyArray<string>
}

export const emptyDiff: RegistryDiff = {
  servicesAdded: [],
  servicesUpdated: [],
  servicesRemoved: [],
  endpointsChanged: [],
}

export const isEmptyDiff = (d: RegistryDiff): boolean =>
  d.servicesAdded.length + d.servicesUpdated.length + d.servicesRemoved.length + d.endpointsChanged.length === 0

export const diffSnapshots = (before: RegistrySnapshot, after: RegistrySnapshot): RegistryDiff => {
  const added: Array<string> = []
  const updated: Array<string> = []
  const removed: Array<string> = []
  const endpoints: Array<string> = []
  for (const [key, svc] of after.servicesByKey) {
    const old = before.servicesByKey.get(key)
    if (old === undefined) added.push(key)
    else if (old !== svc && !deepEqual(old, svc)) updated.push(key)
  }
  for (const key of before.servicesByKey.keys()) if (!after.servicesByKey.has(key)) removed.push(key)
  const epKeys = new Set([...before.endpointsByKey.keys(), ...after.endpointsByKey.keys()])
  for (const key of epKeys) {
    const a = before.endpointsByKey.get(key) ?? NO_ENDPOINTS
    const b = after.endpointsByKey.get(key) ?? NO_ENDPOINTS
    if (a !== b && !deepEqual(a, b)) endpoints.push(key)
  }
  return {
    servicesAdded: added.sort(),
    servicesUpdated: updated.sort(),
    servicesRemoved: removed.sort(),
    endpointsChanged: endpoints.sort(),
  }
}

export interface RegistryChangeEvent extends RegistryDiff {
  /** The registry that changed (`ServiceEntry`, `Mock`, ... or `Aggregate`). */
  readonly registry: string
  readonly version: number
  /** The registry's snapshot after the change. */
  readonly snapshot: RegistrySnapshot
}

export interface ServiceRegistryShape {
  /** `ServiceEntry`, `Mock`, `Orchestrator` or `Aggregate`. */
  readonly name: string
  readonly snapshot: Effect.Effect<RegistrySnapshot>
  readonly services: Effect.Effect<ReadonlyArray<Service>>
  readonly getService: (hostname: string, namespace: string) => Effect.Effect<Option.Option<Service>>
  /** Endpoints of a service; with `port` (service port number) only those serving it. */
  readonly endpoints: (hostname: string, namespace: string, port?: number) => Effect.Effect<ReadonlyArray<Endpoint>>
  /** Subscribes from now on; returns the snapshot the subscription starts from. */
  readonly subscribe: Effect.Effect<
    { readonly snapshot: RegistrySnapshot; readonly events: Queue.Dequeue<RegistryChangeEvent> },
    never,
    Scope.Scope
  >
  readonly changes: Stream.Stream<RegistryChangeEvent>
  /** Completes once the registry has loaded its source for the first time. */
  readonly awaitSynced: Effect.Effect<void>
}

export class ServiceRegistry extends Context.Tag("mesh/ServiceRegistry")<ServiceRegistry, ServiceRegistryShape>() {}

/** Thrown at start-up when `--registries` names the orchestrator but nothing says how to reach one. */
export class OrchestratorNotConfiguredError extends Error {
  readonly _tag = "OrchestratorNotConfiguredError"
  constructor() {
    super(
      "orchestrator registry is not configured: --registries includes Orchestrator but neither --orchconfig nor an in-cluster environment (ORCHESTRATOR_SERVICE_HOST) is present; use --registries Mock to run without an orchestrator",
    )
  }
}
