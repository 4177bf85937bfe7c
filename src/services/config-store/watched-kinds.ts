/**
 * The WatchedConfigKinds service: which (group, kind, version) the config store reads from
 * orchestrator custom resources — empty when config comes from files or memory. The analysis
 * controller writes status to exactly those objects.
 */
import { Context, Effect, Layer } from "effect"

export interface WatchedKind {
  readonly group: string
  readonly kind: string
  readonly version: string
}

export class WatchedConfigKinds extends Context.Tag("mesh/WatchedConfigKinds")<
  WatchedConfigKinds,
  Effect.Effect<ReadonlyArray<WatchedKind>>
>() {}

/** No custom resources are read. */
export const layerNone: Layer.Layer<WatchedConfigKinds> = Layer.succeed(WatchedConfigKinds, Effect.succeed([]))
