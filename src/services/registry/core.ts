/** The state every in-process registry shares: a snapshot, atomic replacement and change events. */
import { Deferred, Effect, Option, PubSub, Ref, Stream } from "effect"
import type { Endpoint, Service } from "./model.js"
import {
  diffSnapshots,
  isEmptyDiff,
  type RegistryChangeEvent,
  type RegistryDiff,
  RegistrySnapshot,
  type ServiceRegistryShape,
} from "./registry.js"

export interface RegistryCore {
  readonly registry: ServiceRegistryShape
  /** Replaces the whole content; publishes one event when anything changed. Returns the diff. */
  readonly replace: (snapshot: RegistrySnapshot) => Effect.Effect<RegistryDiff>
  /** Updates under the registry's lock (read-modify-write). */
  readonly update: (
    f: (current: RegistrySnapshot) => RegistrySnapshot | { services: Iterable<Service>; endpoints: Iterable<Endpoint> },
  ) => Effect.Effect<RegistryDiff>
  readonly markSynced: Effect.Effect<void>
}

export const makeRegistryCore = (name: string): Effect.Effect<RegistryCore> =>
  Effect.gen(function* () {
    const state = yield* Ref.make(RegistrySnapshot.empty)
    const pubsub = yield* PubSub.unbounded<RegistryChangeEvent>()
    const lock = yield* Effect.makeSemaphore(1)
    const synced = yield* Deferred.make<void>()

    const replaceUnlocked = (next: RegistrySnapshot) =>
      Effect.gen(function* () {
        const before = yield* Ref.get(state)
        const diff = diffSnapshots(before, next)
        if (isEmptyDiff(diff)) return diff
        const snapshot = next.withVersion(before.version + 1)
        yield* Ref.set(state, snapshot)
        yield* PubSub.publish(pubsub, { ...diff, registry: name, version: snapshot.version, snapshot })
        return diff
      })

    const subscribe = lock.withPermits(1)(
      Effect.gen(function* () {
        const snapshot = yield* Ref.get(state)
        const events = yield* PubSub.subscribe(pubsub)
        return { snapshot, events }
      }),
    )
    const snapshot = Ref.get(state)
    const registry: ServiceRegistryShape = {
      name,
      snapshot,
      services: Effect.map(snapshot, (s) => s.services),
      getService: (hostname, namespace) =>
        Effect.map(snapshot, (s) => Option.fromNullable(s.service(hostname, namespace))),
      endpoints: (hostname, namespace, port) => Effect.map(snapshot, (s) => s.endpoints(hostname, namespace, port)),
      subscribe,
      changes: Stream.unwrapScoped(Effect.map(subscribe, ({ events }) => Stream.fromQueue(events))),
      awaitSynced: Deferred.await(synced),
    }
    return {
      registry,
      replace: (next) => lock.withPermits(1)(replaceUnlocked(next)),
      update: (f) =>
        lock.withPermits(1)(
          Effect.flatMap(Ref.get(state), (current) => {
            const next = f(current)
            return replaceUnlocked(
              next instanceof RegistrySnapshot ? next : RegistrySnapshot.make(next.services, next.endpoints),
            )
          }),
        ),
      markSynced: Effect.asVoid(Deferred.succeed(synced, undefined)),
    }
  })
