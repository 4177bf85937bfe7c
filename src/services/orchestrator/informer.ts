/**
 * Informers: a local, always-current copy of one kind of orchestrator object (list, then watch
 * from the list's resourceVersion; relist after 410 Gone; bookmarks; backoff on errors), and the
 * batches of changes consumers follow. Implemented in src/layers/orchestrator/informer.ts.
 */
import { Context, type Effect, type Queue, type Scope } from "effect"
import type { ListOptions } from "./client.js"
import type { OrchObject } from "./objects.js"
import type { ResourceRef } from "./resources.js"

export type InformerEventType = "added" | "updated" | "deleted"

export interface InformerEvent<T extends OrchObject> {
  readonly type: InformerEventType
  /** The object now (for `deleted`, its last known state). */
  readonly object: T
  /** The object before an update. */
  readonly previous?: T
}

/** Changes applied together: one watch event, or the difference a (re)list made. */
export interface InformerBatch<T extends OrchObject> {
  readonly events: ReadonlyArray<InformerEvent<T>>
  /** True when the batch comes from a (re)list rather than a watch event. */
  readonly relist: boolean
}

export interface InformerShape<T extends OrchObject> {
  readonly ref: ResourceRef
  /** Completes after the first successful list (never, while the API server cannot be listed). */
  readonly synced: Effect.Effect<void>
  readonly hasSynced: Effect.Effect<boolean>
  /** The current object; synchronous reads of the informer's cache. */
  readonly get: (namespace: string | undefined, name: string) => T | undefined
  /** Every current object (of one namespace, if given). */
  readonly list: (namespace?: string) => ReadonlyArray<T>
  /**
   * Subscribes from now on: the current objects, then every batch after them (none lost or
   * duplicated between the two). Unsubscribes when the scope closes.
   */
  readonly subscribe: Effect.Effect<
    { readonly objects: ReadonlyArray<T>; readonly batches: Queue.Dequeue<InformerBatch<T>> },
    never,
    Scope.Scope
  >
}

export interface InformerOptions extends ListOptions {}

export interface InformersShape {
  /** The client's cluster. */
  readonly clusterId: string
  /**
   * The shared informer of a resource (and options): started on first use, in the factory's
   * scope; later calls with the same resource and options share it.
   */
  readonly informer: <T extends OrchObject>(
    ref: ResourceRef,
    options?: InformerOptions,
  ) => Effect.Effect<InformerShape<T>>
}

/** The informers of the local cluster. */
export class Informers extends Context.Tag("mesh/Informers")<Informers, InformersShape>() {}
