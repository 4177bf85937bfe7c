/**
 * The InferencePool shadow-Service writer (`ENABLE_GATEWAY_API_INFERENCE_EXTENSION`): every valid
 * pool the config store serves gets its shadow Service `<pool>-ip-<hash>`
 * (services/gateway-api/inference-pools.ts `shadowServiceObject`), applied server-side as field
 * manager `mesh.io/inference-pool-controller` and owned by the pool (its uid), so the
 * orchestrator's garbage collector removes it with the pool. As the reference: a pool whose
 * endpoint picker has no port gets none, and a Service of that name without the pool label is
 * someone else's and left alone.
 *
 * A round runs after config or Service changes (debounced) and at least every `interval`; a
 * Service is applied again when what it should be changed or it is missing, so a quiet mesh
 * costs no writes while a deleted Service comes back. The pool's uid is read from the config
 * store's own informer (same resource, version and namespace: shared). Meant to run under
 * `LeaderElection.whileLeader`.
 */
import { Duration, Effect, Queue, type Scope } from "effect"
import { apiKindOf, kindInfoOf } from "../../services/config-model/kinds.js"
import type { ConfigResource } from "../../services/config-model/resource.js"
import type { InferencePoolSpec } from "../../services/config-model/schemas/gateway-api/inference-pool.js"
import { ConfigStore } from "../../services/config-store/config-store.js"
import type { WatchedKind } from "../../services/config-store/watched-kinds.js"
import {
  endpointPickerOf,
  inferencePoolServiceName,
  PoolLabel,
  shadowServiceObject,
} from "../../services/gateway-api/inference-pools.js"
import { withScope } from "../../services/logging/logging.js"
import { OrchestratorClient } from "../../services/orchestrator/client.js"
import { type InformerShape, Informers } from "../../services/orchestrator/informer.js"
import type { OrchObject, OrchService } from "../../services/orchestrator/objects.js"
import { type ResourceRef, Resources } from "../../services/orchestrator/resources.js"
import { applyObject } from "./deployment-controller.js"

/** The reference's field manager for shadow Services, in the mesh's domain. */
export const INFERENCE_POOL_FIELD_MANAGER = "mesh.io/inference-pool-controller"

export interface InferencePoolServicesOptions {
  /** The (group, kind, version) the orchestrator config store watches (its `watched`). */
  readonly watched: Effect.Effect<ReadonlyArray<WatchedKind>>
  /** `MESH_WATCH_NAMESPACE`, as given to the store; empty: every namespace. */
  readonly watchNamespace?: string
  /** The longest time between rounds. */
  readonly interval: Duration.DurationInput
  /** How long a round waits after a change for the ones that follow it; default 100 ms. */
  readonly debounce?: Duration.DurationInput
}

const log = {
  info: (message: string) => Effect.logInfo(message).pipe(withScope("gateway")),
  warn: (message: string) => Effect.logWarning(message).pipe(withScope("gateway")),
  debug: (message: string) => Effect.logDebug(message).pipe(withScope("gateway")),
}

/** The shadow Service of `pool`, owned by the pool object whose uid is `uid`. */
export const ownedShadowService = (pool: ConfigResource<InferencePoolSpec>, uid: string) => {
  const object = shadowServiceObject(pool)
  return {
    ...object,
    metadata: {
      ...object.metadata,
      ownerReferences: object.metadata.ownerReferences.map((owner) => ({ ...owner, uid })),
    },
  }
}

/** Runs until interrupted (leadership lost, shutdown); never fails. */
export const runInferencePoolServices = (
  options: InferencePoolServicesOptions,
): Effect.Effect<void, never, ConfigStore | OrchestratorClient | Informers> => Effect.scoped(writer(options))

const writer = (
  options: InferencePoolServicesOptions,
): Effect.Effect<void, never, ConfigStore | OrchestratorClient | Informers | Scope.Scope> =>
  Effect.gen(function* () {
    const store = yield* ConfigStore
    const client = yield* OrchestratorClient
    const informers = yield* Informers
    const namespace = options.watchNamespace ?? ""
    const interval = Duration.decode(options.interval)
    const debounce = Duration.decode(options.debounce ?? Duration.millis(100))
    const scope = namespace === "" ? {} : { namespace }

    // Subscribed before the first round reads anything, so no change is missed.
    const dirty = yield* Queue.sliding<void>(1)
    const follow = <A>(queue: Queue.Dequeue<A>) =>
      Effect.forkScoped(Effect.forever(Effect.zipRight(Queue.take(queue), Queue.offer(dirty, undefined))))
    yield* follow((yield* store.subscribe).events)
    // The same options as the service registry's informer, so that it is shared.
    const services = yield* informers.informer<OrchService>(Resources.services, scope)
    yield* follow((yield* services.subscribe).batches)
    yield* store.awaitSynced
    yield* services.synced
    yield* log.info("writing the shadow Services of InferencePools")

    /** The store's InferencePool informer, once the store watches the kind (CRD installed). */
    const poolInformer = Effect.gen(function* () {
      const info = kindInfoOf("InferencePool")
      if (info === undefined) return undefined
      const apiKind = apiKindOf(info)
      const w = (yield* options.watched).find((k) => k.group === info.group && k.kind === apiKind)
      if (w === undefined) return undefined
      const ref: ResourceRef = {
        group: w.group,
        version: w.version,
        plural: info.plural,
        kind: apiKind,
        namespaced: true,
      }
      return yield* informers.informer<OrchObject>(ref, scope)
    })

    /** What was last applied, by `namespace/name` of the Service: unchanged ones are not applied again. */
    const applied = new Map<string, string>()
    /** Services of a pool's name that are someone else's, logged once each. */
    const foreign = new Set<string>()

    const ensure = (pool: ConfigResource<InferencePoolSpec>, pools: InformerShape<OrchObject>) =>
      Effect.gen(function* () {
        const { namespace: ns, name } = pool.meta
        const raw = pools.get(ns, name)
        const uid = raw?.metadata.uid
        if (uid === undefined || raw?.metadata.deletionTimestamp !== undefined) return 0
        if (endpointPickerOf(pool, "") === undefined) return 0
        const serviceName = inferencePoolServiceName(name)
        const key = `${ns}/${serviceName}`
        const live = services.get(ns, serviceName)
        if (live !== undefined && live.metadata.labels?.[PoolLabel.pool] === undefined) {
          if (!foreign.has(key)) {
            foreign.add(key)
            yield* log.warn(`Service ${key} exists without ${PoolLabel.pool}: not the shadow of InferencePool ${name}`)
          }
          return 0
        }
        foreign.delete(key)
        const object = ownedShadowService(pool, uid)
        const text = JSON.stringify(object)
        if (applied.get(key) === text && live !== undefined) return 0
        return yield* applyObject(client, Resources.services, object, INFERENCE_POOL_FIELD_MANAGER).pipe(
          Effect.tap(() => Effect.sync(() => applied.set(key, text))),
          Effect.as(1),
          Effect.catchAll((e) =>
            Effect.as(log.warn(`applying the shadow Service ${key} failed (retried): ${e.message}`), 0),
          ),
        )
      })

    const round = Effect.gen(function* () {
      const pools = yield* poolInformer
      if (pools === undefined || !(yield* pools.hasSynced)) return
      const current = (yield* store.snapshot).list("InferencePool")
      let written = 0
      for (const pool of current) written += yield* ensure(pool, pools)
      // Forget Services of pools gone (the collector removes them), so memory stays bounded.
      const present = new Set(current.map((p) => `${p.meta.namespace}/${inferencePoolServiceName(p.meta.name)}`))
      for (const key of applied.keys()) if (!present.has(key)) applied.delete(key)
      for (const key of foreign) if (!present.has(key)) foreign.delete(key)
      if (written > 0) yield* log.debug(`InferencePool shadow Services: ${written} applied`)
    }).pipe(
      // A bug in one round must not stop the writer: the next round starts afresh.
      Effect.catchAllDefect((defect) => log.warn(`an InferencePool shadow-Service round failed: ${String(defect)}`)),
    )

    for (;;) {
      yield* round
      yield* Effect.raceFirst(Queue.take(dirty), Effect.sleep(interval))
      yield* Effect.sleep(debounce)
      yield* Queue.takeAll(dirty)
    }
  })
