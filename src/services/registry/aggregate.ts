/**
 * The aggregate registry: several registries seen as one. For a `namespace/hostname` defined by
 * more than one registry, the service of the first registry (in the given order) is served and
 * the endpoints of every registry defining it are combined.
 */
import { Effect, type Scope } from "effect"
import { makeRegistryCore } from "./core.js"
import type { Endpoint, Service } from "./model.js"
import { RegistrySnapshot, type ServiceRegistryShape } from "./registry.js"

export const AGGREGATE_REGISTRY = "Aggregate"

/** Combines snapshots, first registry first. */
export const combineSnapshots = (snapshots: ReadonlyArray<RegistrySnapshot>): RegistrySnapshot => {
  if (snapshots.length === 1 && snapshots[0] !== undefined) return snapshots[0]
  const services = new Map<string, Service>()
  for (const snapshot of snapshots) {
    for (const [key, service] of snapshot.servicesByKey) if (!services.has(key)) services.set(key, service)
  }
  const endpoints = new Map<string, ReadonlyArray<Endpoint>>()
  for (const snapshot of snapshots) {
    for (const [key, list] of snapshot.endpointsByKey) {
      const existing = endpoints.get(key)
      endpoints.set(key, existing === undefined ? list : [...existing, ...list])
    }
  }
  return new RegistrySnapshot(0, services, endpoints)
}

/**
 * Builds the aggregate of `registries`; its change events follow theirs (one aggregate event
 * per child event that changes the combined view). The follower fibers live in the scope.
 */
export const makeAggregateRegistry = (
  registries: ReadonlyArray<ServiceRegistryShape>,
): Effect.Effect<ServiceRegistryShape, never, Scope.Scope> =>
  Effect.gen(function* () {
    const core = yield* makeRegistryCore(AGGREGATE_REGISTRY)
    const current: Array<RegistrySnapshot> = []
    const subscriptions = []
    for (const registry of registries) {
      const sub = yield* registry.subscribe
      current.push(sub.snapshot)
      subscriptions.push(sub)
    }
    yield* core.replace(combineSnapshots(current))
    yield* Effect.forEach(
      subscriptions,
      (sub, index) =>
        sub.events.take.pipe(
          Effect.flatMap((event) =>
            core.update(() => {
              current[index] = event.snapshot
              return combineSnapshots(current)
            }),
          ),
          Effect.forever,
          Effect.forkScoped,
        ),
      { discard: true },
    )
    yield* Effect.forEach(registries, (r) => r.awaitSynced, { discard: true }).pipe(
      Effect.zipRight(core.markSynced),
      Effect.forkScoped,
    )
    return { ...core.registry, name: AGGREGATE_REGISTRY }
  })
