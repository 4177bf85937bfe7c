/**
 * The ConfigStore service: the mesh's configuration resources as one consistent snapshot, plus
 * a stream of change events naming exactly which resources changed. Backed by a `--configDir`
 * directory (src/layers/config-store/file-store.ts), by memory (`layerMemory`, tests and
 * embedders) or, in a later issue, by orchestrator custom resources.
 */
import { Context, type Effect, type Option, type Queue, type Scope, type Stream } from "effect"
import type { ConfigResource } from "../config-model/resource.js"
import type { ConfigSnapshot, ResourceChange } from "./snapshot.js"

/** One applied change of the store. */
export interface ConfigChangeEvent {
  /** Version of `snapshot`. */
  readonly version: number
  /**
   * True for the first event of `watch`: it describes the whole current snapshot (every served
   * resource listed as `added`), not a change.
   */
  readonly full: boolean
  /** Exactly the resources added, updated or removed; empty when only the issues changed. */
  readonly changes: ReadonlyArray<ResourceChange>
  /** Kinds named by `changes`, sorted. */
  readonly kinds: ReadonlyArray<string>
  /** The set of current issues (invalid files, conflicts) changed with this event. */
  readonly issuesChanged: boolean
  /** The snapshot after the change. */
  readonly snapshot: ConfigSnapshot
}

export interface ConfigStoreShape {
  /** The current snapshot. */
  readonly snapshot: Effect.Effect<ConfigSnapshot>
  readonly get: (kind: string, namespace: string, name: string) => Effect.Effect<Option.Option<ConfigResource>>
  /** Resources of a kind, sorted by namespace and name; optionally one namespace only. */
  readonly list: (kind: string, namespace?: string) => Effect.Effect<ReadonlyArray<ConfigResource>>
  /**
   * Subscribes to change events from now on; returns the snapshot the subscription starts
   * from (no event is lost or duplicated between the two). Unsubscribes when the scope closes.
   */
  readonly subscribe: Effect.Effect<
    { readonly snapshot: ConfigSnapshot; readonly events: Queue.Dequeue<ConfigChangeEvent> },
    never,
    Scope.Scope
  >
  /** Change events after the stream starts. */
  readonly changes: Stream.Stream<ConfigChangeEvent>
  /** A `full` event for the current snapshot, then every change event. */
  readonly watch: Stream.Stream<ConfigChangeEvent>
  /** Completes once the first full load has been applied. */
  readonly awaitSynced: Effect.Effect<void>
}

export class ConfigStore extends Context.Tag("mesh/ConfigStore")<ConfigStore, ConfigStoreShape>() {}
