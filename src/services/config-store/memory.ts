/**
 * The in-memory config store: the store core every backend shares (snapshot, atomic apply,
 * change events) and `layerMemory`, a store that tests and embedders fill directly.
 */
import { Context, Deferred, Effect, Layer, Option, PubSub, Queue, Ref, Stream } from "effect"
import type { ConfigResource } from "../config-model/resource.js"
import { resourceKey } from "../config-model/resource.js"
import { type ConfigChangeEvent, ConfigStore, type ConfigStoreShape } from "./config-store.js"
import {
  type ApplyResult,
  ConfigSnapshot,
  changedKinds,
  type FileParseResult,
  type FileUpdate,
  type ResourceChange,
} from "./snapshot.js"

/** What a backend drives: atomic batches of file updates. */
export interface ConfigStoreCore {
  readonly store: ConfigStoreShape
  /** Applies a batch atomically; publishes one event when resources or issues changed. */
  readonly apply: (updates: ReadonlyArray<FileUpdate>) => Effect.Effect<ApplyResult>
  /** Marks the first full load as done (`awaitSynced` completes). */
  readonly markSynced: Effect.Effect<void>
}

/** The event a `watch` stream starts with: the whole snapshot as additions. */
export const fullEvent = (snapshot: ConfigSnapshot): ConfigChangeEvent => {
  const changes: Array<ResourceChange> = snapshot.all().map((r) => ({
    type: "added",
    kind: r.kind,
    namespace: r.meta.namespace,
    name: r.meta.name,
    key: resourceKey(r),
  }))
  return {
    version: snapshot.version,
    full: true,
    changes,
    kinds: snapshot.kinds,
    issuesChanged: false,
    snapshot,
  }
}

export const makeConfigStoreCore: Effect.Effect<ConfigStoreCore> = Effect.gen(function* () {
  const state = yield* Ref.make(ConfigSnapshot.empty)
  const pubsub = yield* PubSub.unbounded<ConfigChangeEvent>()
  const lock = yield* Effect.makeSemaphore(1)
  const synced = yield* Deferred.make<void>()

  const apply = (updates: ReadonlyArray<FileUpdate>) =>
    lock
      .withPermits(1)(
        Effect.gen(function* () {
          const before = yield* Ref.get(state)
          const result = before.apply(updates)
          yield* Ref.set(state, result.snapshot)
          if (result.changes.length > 0 || result.issuesChanged) {
            yield* PubSub.publish(pubsub, {
              version: result.snapshot.version,
              full: false,
              changes: result.changes,
              kinds: changedKinds(result.changes),
              issuesChanged: result.issuesChanged,
              snapshot: result.snapshot,
            })
          }
          return result
        }),
      )
      .pipe(Effect.withSpan("ConfigStore.apply", { attributes: { files: updates.length } }))

  const subscribe = lock.withPermits(1)(
    Effect.gen(function* () {
      const snapshot = yield* Ref.get(state)
      const events = yield* PubSub.subscribe(pubsub)
      return { snapshot, events }
    }),
  )

  const snapshot = Ref.get(state)
  const store: ConfigStoreShape = {
    snapshot,
    get: (kind, namespace, name) => Effect.map(snapshot, (s) => Option.fromNullable(s.get(kind, namespace, name))),
    list: (kind, namespace) => Effect.map(snapshot, (s) => s.list(kind, namespace)),
    subscribe,
    changes: Stream.unwrapScoped(Effect.map(subscribe, ({ events }) => Stream.fromQueue(events))),
    watch: Stream.unwrapScoped(
      Effect.map(subscribe, ({ snapshot, events }) =>
        Stream.concat(Stream.succeed(fullEvent(snapshot)), Stream.fromQueue(events)),
      ),
    ),
    awaitSynced: Deferred.await(synced),
  }
  return { store, apply, markSynced: Deferred.succeed(synced, undefined).pipe(Effect.asVoid) }
})

/** Pseudo-file under which `upsert` keeps a single resource. */
export const memoryFileOf = (resource: Pick<ConfigResource, "kind" | "meta">): string =>
  `memory:${resourceKey(resource)}`

export interface MemoryConfigStoreShape {
  readonly store: ConfigStoreShape
  /** Replaces the contents of one (pseudo-)file, with the same rules as a file on disk. */
  readonly setFile: (file: string, result: FileParseResult) => Effect.Effect<ApplyResult>
  readonly removeFile: (file: string) => Effect.Effect<ApplyResult>
  readonly apply: (updates: ReadonlyArray<FileUpdate>) => Effect.Effect<ApplyResult>
  /** Adds or replaces one resource (kept under its own pseudo-file). */
  readonly upsert: (resource: ConfigResource) => Effect.Effect<ApplyResult>
  readonly remove: (kind: string, namespace: string, name: string) => Effect.Effect<ApplyResult>
}

/** Write access to the in-memory store (provided by `layerMemory` next to `ConfigStore`). */
export class MemoryConfigStore extends Context.Tag("mesh/MemoryConfigStore")<
  MemoryConfigStore,
  MemoryConfigStoreShape
>() {}

export const makeMemoryConfigStore = (
  initial: ReadonlyArray<ConfigResource> = [],
): Effect.Effect<MemoryConfigStoreShape> =>
  Effect.gen(function* () {
    const core = yield* makeConfigStoreCore
    const upsert = (resource: ConfigResource) => {
      const file = memoryFileOf(resource)
      return core.apply([
        { file, result: { resources: [{ ...resource, source: { file, documentIndex: 0 } }], issues: [] } },
      ])
    }
    for (const r of initial) yield* upsert(r)
    yield* core.markSynced
    return {
      store: core.store,
      apply: core.apply,
      setFile: (file, result) => core.apply([{ file, result }]),
      removeFile: (file) => core.apply([{ file, result: undefined }]),
      upsert,
      remove: (kind, namespace, name) =>
        core.apply([
          { file: memoryFileOf({ kind, meta: { namespace, name, labels: {}, annotations: {} } }), result: undefined },
        ]),
    }
  })

/** An in-memory store, optionally pre-filled; provides `ConfigStore` and `MemoryConfigStore`. */
export const layerMemory = (
  initial: ReadonlyArray<ConfigResource> = [],
): Layer.Layer<ConfigStore | MemoryConfigStore> =>
  Layer.effectContext(
    Effect.map(makeMemoryConfigStore(initial), (memory) =>
      Context.make(MemoryConfigStore, memory).pipe(Context.add(ConfigStore, memory.store)),
    ),
  )

/** Takes events from a subscription until one satisfies `predicate` (tests, start-up waits). */
export const awaitEvent = (
  events: Queue.Dequeue<ConfigChangeEvent>,
  predicate: (event: ConfigChangeEvent) => boolean,
): Effect.Effect<ConfigChangeEvent> =>
  Effect.gen(function* () {
    while (true) {
      const event = yield* Queue.take(events)
      if (predicate(event)) return event
    }
  })
