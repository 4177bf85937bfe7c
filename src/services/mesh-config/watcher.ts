/**
 * The MeshWatcher service: the current mesh configuration and mesh networks, and their changes.
 * File-backed by src/layers/mesh-config/file.ts; `layerMemory` for tests and embedders.
 */
import { Context, Effect, Layer, type Stream, SubscriptionRef } from "effect"
import type { ValidationIssue } from "../config-model/resource.js"
import { deepEqual } from "../config-store/snapshot.js"
import { defaultMeshConfig, defaultMeshNetworks, type MeshConfig, type MeshNetworks } from "./mesh-config.js"

export interface MeshWatcherShape {
  readonly config: Effect.Effect<MeshConfig>
  readonly networks: Effect.Effect<MeshNetworks>
  /** The current mesh config, then every change. */
  readonly configChanges: Stream.Stream<MeshConfig>
  /** The current mesh networks, then every change. */
  readonly networksChanges: Stream.Stream<MeshNetworks>
  /** Problems of the configuration files now (empty when they are all valid). */
  readonly issues: Effect.Effect<ReadonlyArray<ValidationIssue>>
  /** The current problems, then every change of them. */
  readonly issuesChanges: Stream.Stream<ReadonlyArray<ValidationIssue>>
}

export class MeshWatcher extends Context.Tag("mesh/MeshWatcher")<MeshWatcher, MeshWatcherShape>() {}

/** Write side of a mesh watcher. */
export interface MeshWatcherControl {
  readonly watcher: MeshWatcherShape
  /** Replaces the config; returns false (and notifies no one) when it did not change. */
  readonly setConfig: (config: MeshConfig) => Effect.Effect<boolean>
  readonly setNetworks: (networks: MeshNetworks) => Effect.Effect<boolean>
  readonly setIssues: (issues: ReadonlyArray<ValidationIssue>) => Effect.Effect<void>
}

export class MeshWatcherWriter extends Context.Tag("mesh/MeshWatcherWriter")<MeshWatcherWriter, MeshWatcherControl>() {}

export const makeMeshWatcher = (
  config: MeshConfig = defaultMeshConfig(),
  networks: MeshNetworks = defaultMeshNetworks(),
): Effect.Effect<MeshWatcherControl> =>
  Effect.gen(function* () {
    const configRef = yield* SubscriptionRef.make(config)
    const networksRef = yield* SubscriptionRef.make(networks)
    const issuesRef = yield* SubscriptionRef.make<ReadonlyArray<ValidationIssue>>([])
    const setIfChanged =
      <A>(ref: SubscriptionRef.SubscriptionRef<A>) =>
      (next: A) =>
        SubscriptionRef.modifyEffect(ref, (current) =>
          deepEqual(current, next) ? Effect.succeed([false, current] as const) : Effect.succeed([true, next] as const),
        )
    return {
      watcher: {
        config: SubscriptionRef.get(configRef),
        networks: SubscriptionRef.get(networksRef),
        configChanges: configRef.changes,
        networksChanges: networksRef.changes,
        issues: SubscriptionRef.get(issuesRef),
        issuesChanges: issuesRef.changes,
      },
      setConfig: setIfChanged(configRef),
      setNetworks: setIfChanged(networksRef),
      setIssues: (issues) => Effect.asVoid(setIfChanged(issuesRef)(issues)),
    }
  })

/** A fixed (or test-driven) mesh config: provides `MeshWatcher` and `MeshWatcherWriter`. */
export const layerMemory = (
  config: MeshConfig = defaultMeshConfig(),
  networks: MeshNetworks = defaultMeshNetworks(),
): Layer.Layer<MeshWatcher | MeshWatcherWriter> =>
  Layer.effectContext(
    Effect.map(makeMeshWatcher(config, networks), (control) =>
      Context.make(MeshWatcherWriter, control).pipe(Context.add(MeshWatcher, control.watcher)),
    ),
  )
