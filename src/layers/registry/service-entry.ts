/**
 * The ServiceEntry registry, following the ConfigStore: every change of a ServiceEntry or a
 * WorkloadEntry (and of the mesh's trust domain, which names endpoint identities) re-converts
 * the entries and publishes the services and endpoints that changed. Auto-allocated addresses
 * stay put across changes (the previous allocation is carried over).
 */
import { Effect, Layer, Queue, type Scope, Stream } from "effect"
import type { ConfigResource } from "../../services/config-model/resource.js"
import type { ServiceEntrySpec } from "../../services/config-model/schemas/service-entry.js"
import type { WorkloadEntrySpec } from "../../services/config-model/schemas/workload-entry.js"
import { ConfigStore } from "../../services/config-store/config-store.js"
import type { ConfigSnapshot } from "../../services/config-store/snapshot.js"
import { DEFAULT_CLUSTER_ID } from "../../services/constants.js"
import { withScope } from "../../services/logging/logging.js"
import { MeshWatcher } from "../../services/mesh-config/watcher.js"
import { type Allocation, emptyAllocation } from "../../services/registry/auto-allocate.js"
import { makeRegistryCore } from "../../services/registry/core.js"
import { RegistrySnapshot, ServiceRegistry, type ServiceRegistryShape } from "../../services/registry/registry.js"
import {
  type ConversionCache,
  convertServiceEntries,
  type HostConflict,
} from "../../services/registry/service-entry.js"

export interface ServiceEntryRegistryOptions {
  /** `CLUSTER_ID`. */
  readonly clusterId?: string
  /** `PILOT_ENABLE_IP_AUTOALLOCATE` (default true). */
  readonly autoAllocate?: boolean
}

const WATCHED_KINDS = new Set(["ServiceEntry", "WorkloadEntry"])

export const makeServiceEntryRegistry = (
  options: ServiceEntryRegistryOptions = {},
): Effect.Effect<ServiceRegistryShape, never, ConfigStore | MeshWatcher | Scope.Scope> =>
  Effect.gen(function* () {
    const store = yield* ConfigStore
    const mesh = yield* MeshWatcher
    const core = yield* makeRegistryCore("ServiceEntry")
    const lock = yield* Effect.makeSemaphore(1)
    let allocation: Allocation = emptyAllocation
    let conflicts: ReadonlyArray<HostConflict> = []
    let trustDomain = (yield* mesh.config).trustDomain
    const cache: ConversionCache = new Map()

    const rebuild = (snapshot: ConfigSnapshot) =>
      lock
        .withPermits(1)(
          Effect.gen(function* () {
            const result = convertServiceEntries(
              snapshot.list("ServiceEntry") as ReadonlyArray<ConfigResource<ServiceEntrySpec>>,
              snapshot.list("WorkloadEntry") as ReadonlyArray<ConfigResource<WorkloadEntrySpec>>,
              {
                clusterId: options.clusterId ?? DEFAULT_CLUSTER_ID,
                trustDomain,
                autoAllocate: options.autoAllocate ?? true,
              },
              allocation,
              cache,
            )
            if (
              result.allocation.exhausted.length > 0 &&
              result.allocation.exhausted.length !== allocation.exhausted.length
            ) {
              yield* Effect.logError(
                `out of addresses to auto-allocate: ${result.allocation.exhausted.length} ServiceEntry hosts left without one (first: ${result.allocation.exhausted[0]})`,
              ).pipe(withScope("ip-autoallocate"))
            }
            allocation = result.allocation
            const known = new Set(conflicts.map((c) => `${c.key}|${c.winner}|${c.ignored.join(",")}`))
            for (const c of result.conflicts) {
              if (known.has(`${c.key}|${c.winner}|${c.ignored.join(",")}`)) continue
              yield* Effect.logWarning(
                `host ${c.key} is defined by more than one ServiceEntry; serving ${c.winner}, ignoring ${c.ignored.join(", ")}`,
              ).pipe(withScope("serviceentry"))
            }
            conflicts = result.conflicts
            const diff = yield* core.replace(RegistrySnapshot.make(result.services, result.endpoints))
            yield* Effect.logDebug(
              `ServiceEntry registry: ${result.services.length} services; +${diff.servicesAdded.length} ~${diff.servicesUpdated.length} -${diff.servicesRemoved.length}, endpoints changed for ${diff.endpointsChanged.length}`,
            ).pipe(withScope("serviceentry"))
          }),
        )
        .pipe(Effect.withSpan("ServiceEntryRegistry.rebuild"))

    const { events } = yield* store.subscribe
    yield* store.awaitSynced
    yield* rebuild(yield* store.snapshot)
    yield* core.markSynced
    yield* Queue.take(events).pipe(
      Effect.flatMap((event) =>
        event.kinds.some((k) => WATCHED_KINDS.has(k)) ? rebuild(event.snapshot) : Effect.void,
      ),
      Effect.forever,
      Effect.forkScoped,
    )
    yield* mesh.configChanges.pipe(
      Stream.map((config) => config.trustDomain),
      Stream.changes,
      Stream.drop(1),
      Stream.runForEach((next) =>
        Effect.suspend(() => {
          trustDomain = next
          return Effect.flatMap(store.snapshot, rebuild)
        }),
      ),
      Effect.forkScoped,
    )
    return core.registry
  })

/** The ServiceEntry registry alone as the ServiceRegistry. */
export const layerServiceEntry = (
  options: ServiceEntryRegistryOptions = {},
): Layer.Layer<ServiceRegistry, never, ConfigStore | MeshWatcher> =>
  Layer.scoped(ServiceRegistry, makeServiceEntryRegistry(options))
