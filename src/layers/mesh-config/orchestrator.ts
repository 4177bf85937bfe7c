/**
 * The MeshWatcher from orchestrator ConfigMaps: the mesh ConfigMap of the mesh namespace (key
 * `mesh` for the mesh config, `meshNetworks` for the networks) and, when `SHARED_MESH_CONFIG`
 * names one, the shared ConfigMap (same namespace and keys) under it — the standard config wins.
 * Each ConfigMap is followed by its own informer (field selector on its name), so a change of
 * any other ConfigMap costs nothing.
 *
 * Start-up waits until both informers have listed, so the first config anyone reads is the
 * ConfigMaps', never a default that is replaced a moment later. Afterwards:
 * - a missing ConfigMap or key contributes nothing (built-in defaults when nothing is given);
 * - a bad value (YAML or field errors) keeps the last good config, logs the ConfigMap key (as the
 *   `file`) and field, and is reported by `issues` until fixed;
 * - a ConfigMap deleted after start-up resets what it contributed to the defaults, as the
 *   reference does (its ConfigMap source turns empty and the config is recomputed from the
 *   remaining sources) — unlike a deleted file, which cannot be told from one being replaced;
 * - changes are published only when the resolved config (or networks) changes.
 */
import { Effect, Either, Layer, Option, type Queue, type Scope, Stream } from "effect"
import type { ValidationIssue } from "../../services/config-model/resource.js"
import { withScope } from "../../services/logging/logging.js"
import {
  type ConfigMapSlot,
  configMapInputs,
  type MeshSourceInputs,
  meshConfigMapName,
  type Resolved,
  resolveMeshInputs,
  resolveNetworkInputs,
} from "../../services/mesh-config/configmap.js"
import type { Applied } from "../../services/mesh-config/mesh-config.js"
import { MeshWatcher, type MeshWatcherControl, makeMeshWatcher } from "../../services/mesh-config/watcher.js"
import type { InformerBatch, Informers } from "../../services/orchestrator/informer.js"
import type { OrchConfigMap } from "../../services/orchestrator/objects.js"
import { followNamedConfigMap } from "../orchestrator/named-configmap.js"
import { logIssues } from "./log-issues.js"

export interface OrchestratorMeshConfigOptions {
  /** The mesh namespace (`--namespace` / `POD_NAMESPACE`). */
  readonly namespace: string
  /** The mesh ConfigMap; default `mesh`, or `mesh-<revision>` for a non-default `revision`. */
  readonly configMapName?: string | undefined
  /** `REVISION`: names the default ConfigMap (`mesh-<revision>`) unless `configMapName` is given. */
  readonly revision?: string | undefined
  /** `SHARED_MESH_CONFIG`: a ConfigMap of the same namespace whose config the standard one overrides; "" = none. */
  readonly sharedConfigMapName?: string | undefined
}

/** Texts the inputs carry, to skip ConfigMap updates that change nothing the mesh reads. */
const inputsKey = (inputs: MeshSourceInputs): string =>
  JSON.stringify([inputs.sharedMesh, inputs.standardMesh, inputs.sharedNetworks, inputs.standardNetworks])

/**
 * Applies resolved inputs to a watcher: publishes what changed, keeps the last good result on
 * issues, and reports the issues of both halves. Shared with any other source of the four inputs.
 */
export const makeInputsApplier = (control: MeshWatcherControl) => {
  let meshIssues: ReadonlyArray<ValidationIssue> = []
  let networkIssues: ReadonlyArray<ValidationIssue> = []
  let lastKey: string | undefined

  const applyHalf = <A>(
    what: string,
    resolved: Resolved<A>,
    issues: ReadonlyArray<ValidationIssue>,
    set: (value: A) => Effect.Effect<boolean>,
  ): Effect.Effect<ReadonlyArray<ValidationIssue>> =>
    Effect.gen(function* () {
      if (resolved === "keep") return issues
      const applied: Applied<A> = resolved
      if (Either.isLeft(applied)) {
        yield* logIssues(what, applied.left)
        return applied.left
      }
      yield* Effect.forEach(applied.right.warnings, (w) => Effect.logWarning(w), { discard: true })
      if (yield* set(applied.right.value)) yield* Effect.logInfo(`${what} updated`)
      else if (issues.length > 0) yield* Effect.logInfo(`${what} is valid again`)
      return []
    })

  return (inputs: MeshSourceInputs): Effect.Effect<void> =>
    Effect.gen(function* () {
      const key = inputsKey(inputs)
      if (key === lastKey) return
      lastKey = key
      meshIssues = yield* applyHalf("mesh configuration", resolveMeshInputs(inputs), meshIssues, control.setConfig)
      networkIssues = yield* applyHalf(
        "mesh networks",
        resolveNetworkInputs(inputs),
        networkIssues,
        control.setNetworks,
      )
      yield* control.setIssues([...meshIssues, ...networkIssues])
    })
}

interface FollowedConfigMap {
  readonly slot: () => ConfigMapSlot
  /** Applies a batch; true when this ConfigMap changed. */
  readonly apply: (batch: InformerBatch<OrchConfigMap>) => boolean
  readonly batches: Queue.Dequeue<InformerBatch<OrchConfigMap>>
}

/** Follows one named ConfigMap through its own informer, from its first list on. */
const followConfigMap = (
  namespace: string,
  name: string,
): Effect.Effect<FollowedConfigMap, never, Informers | Scope.Scope> =>
  Effect.gen(function* () {
    const followed = yield* followNamedConfigMap(namespace, name, "mesh configuration")
    let current = followed.initial
    return {
      slot: () => ({ namespace, name, configMap: current }),
      apply: (batch) => {
        const before = current
        current = followed.next(current, batch)
        return before !== current
      },
      batches: followed.batches,
    }
  })

/**
 * Builds the watcher; returns once both ConfigMaps have been listed and applied. Its informers
 * and the fiber following them live in the scope.
 */
export const makeOrchestratorMeshWatcher = (
  options: OrchestratorMeshConfigOptions,
): Effect.Effect<MeshWatcherControl, never, Informers | Scope.Scope> =>
  Effect.gen(function* () {
    const { namespace } = options
    const name = options.configMapName ?? meshConfigMapName(options.revision)
    const sharedName = options.sharedConfigMapName ?? ""
    // Both informers list at once.
    const [standard, sharedOption] = yield* Effect.all(
      [
        followConfigMap(namespace, name),
        sharedName === "" ? Effect.succeedNone : Effect.asSome(followConfigMap(namespace, sharedName)),
      ],
      { concurrency: "unbounded" },
    )
    const shared = Option.getOrUndefined(sharedOption)
    const control = yield* makeMeshWatcher()
    const applyInputs = makeInputsApplier(control)
    yield* applyInputs(configMapInputs(standard.slot(), shared?.slot()))
    const config = yield* control.watcher.config
    const from = [
      standard.slot().configMap !== undefined ? `ConfigMap ${namespace}/${name}` : undefined,
      shared?.slot().configMap !== undefined ? `shared ConfigMap ${namespace}/${sharedName}` : undefined,
    ].filter((s) => s !== undefined)
    yield* Effect.logInfo(
      `mesh configuration: ${from.length > 0 ? from.join(" over ") : `built-in defaults (no ConfigMap ${namespace}/${name})`}; trust domain ${config.trustDomain}, root namespace ${config.rootNamespace}`,
    )

    // Both ConfigMaps' batches through one consumer, so changes are applied one at a time.
    const tagged = (followed: FollowedConfigMap, label: string) =>
      Stream.map(Stream.fromQueue(followed.batches), (batch) => ({ followed, label, batch }))
    yield* Effect.forkScoped(
      Stream.mergeAll(
        [
          tagged(standard, "mesh ConfigMap"),
          ...(shared === undefined ? [] : [tagged(shared, "shared mesh ConfigMap")]),
        ],
        { concurrency: "unbounded" },
      ).pipe(
        Stream.runForEach(({ followed, label, batch }) =>
          Effect.gen(function* () {
            const existed = followed.slot().configMap !== undefined
            if (!followed.apply(batch)) return
            if (existed && followed.slot().configMap === undefined) {
              yield* Effect.logWarning(
                `${label} ${namespace}/${followed.slot().name} was deleted; what it set reverts to the built-in defaults`,
              )
            }
            yield* applyInputs(configMapInputs(standard.slot(), shared?.slot()))
          }),
        ),
      ),
    )
    return control
  }).pipe(withScope("kube"))

/** The MeshWatcher from the mesh ConfigMaps; built once the ConfigMaps have been listed. */
export const layer = (options: OrchestratorMeshConfigOptions): Layer.Layer<MeshWatcher, never, Informers> =>
  Layer.scoped(
    MeshWatcher,
    Effect.map(makeOrchestratorMeshWatcher(options), (control) => control.watcher),
  )
