/**
 * What the orchestrator registries (the cluster's and file mode's) take from the rest of the
 * control plane besides their own objects: config-store snapshots whose change touches the kinds
 * they select from (ServiceEntry, WorkloadEntry, ...), and the mesh config's trust domain. Both
 * are forwarded into the registry's inbox by fibers in the current scope, so one publish loop
 * folds them with everything else in order.
 */
import { Effect, Queue, type Scope, Stream } from "effect"
import type { ConfigStoreShape } from "../../services/config-store/config-store.js"
import type { ConfigSnapshot } from "../../services/config-store/snapshot.js"
import type { MeshWatcherShape } from "../../services/mesh-config/watcher.js"

export type ConfigInput =
  | { readonly _tag: "config"; readonly snapshot: ConfigSnapshot }
  | { readonly _tag: "trustDomain"; readonly trustDomain: string }

/**
 * Subscribes to the store and the mesh config and forwards their changes into `inbox`; returns
 * the store's snapshot at subscription (the first publish uses it, once the store has synced).
 */
export const forwardConfigInputs = (
  store: Pick<ConfigStoreShape, "subscribe">,
  mesh: Pick<MeshWatcherShape, "configChanges">,
  inbox: Queue.Enqueue<ConfigInput>,
  kinds: ReadonlySet<string>,
): Effect.Effect<ConfigSnapshot, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { snapshot, events } = yield* store.subscribe
    yield* Queue.take(events).pipe(
      Effect.flatMap((event) =>
        event.kinds.some((k) => kinds.has(k))
          ? Queue.offer(inbox, { _tag: "config", snapshot: event.snapshot })
          : Effect.void,
      ),
      Effect.forever,
      Effect.forkScoped,
    )
    yield* mesh.configChanges.pipe(
      Stream.map((c) => c.trustDomain),
      Stream.changes,
      Stream.runForEach((trustDomain) => Queue.offer(inbox, { _tag: "trustDomain", trustDomain })),
      Effect.forkScoped,
    )
    return snapshot
  })
