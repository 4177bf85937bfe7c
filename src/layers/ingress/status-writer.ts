/**
 * The Ingress status writer: every Ingress the mesh serves (mesh config's ingress settings, see
 * services/ingress/convert.ts) gets the ingress gateway's addresses as its
 * `status.loadBalancer.ingress` (services/ingress/status.ts), written by a merge patch of its
 * status subresource. As the reference, Ingresses the mesh does not serve are left alone.
 *
 * A round runs after config, mesh config, gateway Service, pod or node changes, debounced, and at
 * least every `interval` (a status someone else overwrote is put back). Only Ingresses whose
 * status differs are written; a vanished one is skipped; a failed write is logged and retried on
 * the next round. Ingresses are read from the config store's own informer (same version and
 * namespace). Meant to run under `LeaderElection.whileLeader`.
 */
import { Duration, Effect, Queue, type Scope, Stream } from "effect"
import { ORCH_NETWORKING_GROUP } from "../../services/config-model/kinds.js"
import { ConfigStore } from "../../services/config-store/config-store.js"
import { deepEqual } from "../../services/config-store/snapshot.js"
import type { WatchedKind } from "../../services/config-store/watched-kinds.js"
import { convertIngresses } from "../../services/ingress/convert.js"
import type { Ingress, IngressClass } from "../../services/ingress/model.js"
import { ingressSettingsOf } from "../../services/ingress/push-view.js"
import { ingressAddresses, loadBalancerStatus } from "../../services/ingress/status.js"
import { withScope } from "../../services/logging/logging.js"
import { MeshWatcher } from "../../services/mesh-config/watcher.js"
import { OrchestratorClient } from "../../services/orchestrator/client.js"
import { Informers } from "../../services/orchestrator/informer.js"
import type { OrchNode, OrchObject, OrchPod, OrchService } from "../../services/orchestrator/objects.js"
import { type ResourceRef, Resources } from "../../services/orchestrator/resources.js"
import { patchStatus } from "../orchestrator/status-patch.js"

export interface IngressStatusOptions {
  /** `--namespace`: where the ingress gateway Service and pods are. */
  readonly systemNamespace: string
  /** `--domain`. */
  readonly domainSuffix: string
  /** The longest time between rounds. */
  readonly interval: Duration.DurationInput
  /** How long a round waits after a change for the ones that follow it; default 100 ms. */
  readonly debounce?: Duration.DurationInput
  /** The (group, kind, version) the orchestrator config store watches. */
  readonly watched: Effect.Effect<ReadonlyArray<WatchedKind>>
  /** `MESH_WATCH_NAMESPACE`, as given to the store; empty: every namespace. */
  readonly watchNamespace?: string
}

type IngressObject = OrchObject & {
  readonly status?: { readonly loadBalancer?: { readonly ingress?: ReadonlyArray<unknown> } }
}

const warn = (message: string) => Effect.logWarning(message).pipe(withScope("status"))

/** Runs until interrupted (leadership lost, shutdown); never fails. */
export const runIngressStatus = (
  options: IngressStatusOptions,
): Effect.Effect<void, never, ConfigStore | MeshWatcher | OrchestratorClient | Informers> =>
  Effect.scoped(writer(options))

const writer = (
  options: IngressStatusOptions,
): Effect.Effect<void, never, ConfigStore | MeshWatcher | OrchestratorClient | Informers | Scope.Scope> =>
  Effect.gen(function* () {
    const store = yield* ConfigStore
    const mesh = yield* MeshWatcher
    const client = yield* OrchestratorClient
    const informers = yield* Informers
    const namespace = options.watchNamespace ?? ""
    const interval = Duration.decode(options.interval)
    const debounce = Duration.decode(options.debounce ?? Duration.millis(100))

    const dirty = yield* Queue.sliding<void>(1)
    const follow = <A>(queue: Queue.Dequeue<A>) =>
      Effect.forkScoped(Effect.forever(Effect.zipRight(Queue.take(queue), Queue.offer(dirty, undefined))))
    yield* follow((yield* store.subscribe).events)
    yield* mesh.configChanges.pipe(
      Stream.runForEach(() => Queue.offer(dirty, undefined)),
      Effect.forkScoped,
    )
    const services = yield* informers.informer<OrchService>(Resources.services, { namespace: options.systemNamespace })
    const pods = yield* informers.informer<OrchPod>(Resources.pods, { namespace: options.systemNamespace })
    const nodes = yield* informers.informer<OrchNode>(Resources.nodes)
    for (const informer of [services, pods, nodes] as const)
      yield* follow((yield* (informer as typeof services).subscribe).batches)
    yield* store.awaitSynced
    yield* Effect.all([services.synced, pods.synced, nodes.synced], { discard: true, concurrency: "unbounded" })

    const ingressInformer = Effect.gen(function* () {
      const w = (yield* options.watched).find((k) => k.group === ORCH_NETWORKING_GROUP && k.kind === "Ingress")
      if (w === undefined) return undefined
      const ref: ResourceRef = {
        group: w.group,
        version: w.version,
        plural: "ingresses",
        kind: "Ingress",
        namespaced: true,
      }
      const informer = yield* informers.informer<IngressObject>(ref, namespace === "" ? {} : { namespace })
      return (yield* informer.hasSynced) ? { ref, informer } : undefined
    })

    const round = Effect.gen(function* () {
      const settings = ingressSettingsOf(yield* mesh.config)
      if (settings.ingressControllerMode === "OFF") return
      const target = yield* ingressInformer
      if (target === undefined) return
      const snapshot = yield* store.snapshot
      const { served } = convertIngresses({
        ingresses: snapshot.list("Ingress") as ReadonlyArray<Ingress>,
        ingressClasses: snapshot.list("IngressClass") as ReadonlyArray<IngressClass>,
        services: [],
        settings,
        systemNamespace: options.systemNamespace,
        domainSuffix: options.domainSuffix,
      })
      if (served.length === 0) return
      const service =
        settings.ingressService === "" ? undefined : services.get(options.systemNamespace, settings.ingressService)
      const addresses = ingressAddresses(
        settings,
        service === undefined
          ? undefined
          : {
              ...(service.spec?.type !== undefined ? { type: service.spec.type } : {}),
              ...(service.spec?.externalName !== undefined ? { externalName: service.spec.externalName } : {}),
              loadBalancerIngress: service.status?.loadBalancer?.ingress ?? [],
              externalIPs: service.spec?.externalIPs ?? [],
            },
        pods.list().map((p) => ({
          labels: p.metadata.labels ?? {},
          phase: p.status?.phase ?? "",
          nodeName: p.spec?.nodeName ?? "",
        })),
        nodes.list().map((n) => ({ name: n.metadata.name, addresses: n.status?.addresses ?? [] })),
      )
      const desired = loadBalancerStatus(addresses)
      let written = 0
      for (const ingress of served) {
        const object = target.informer.get(ingress.meta.namespace, ingress.meta.name)
        if (object === undefined) continue
        if (deepEqual(object.status?.loadBalancer?.ingress ?? [], desired)) continue
        written += yield* patchStatus(client, target.ref, ingress.meta.namespace, ingress.meta.name, {
          status: { loadBalancer: { ingress: desired } },
        }).pipe(
          Effect.as(1),
          Effect.catchAll((e) =>
            e.notFound
              ? Effect.succeed(0)
              : Effect.as(
                  warn(
                    `writing the status of Ingress ${ingress.meta.namespace}/${ingress.meta.name} failed (retried next round): ${e.message}`,
                  ),
                  0,
                ),
          ),
        )
      }
      if (written > 0)
        yield* Effect.logDebug(`Ingress status written to ${written} object(s)`).pipe(withScope("status"))
    }).pipe(Effect.catchAllDefect((defect) => warn(`an Ingress status round failed: ${String(defect)}`)))

    for (;;) {
      yield* round
      yield* Effect.raceFirst(Queue.take(dirty), Effect.sleep(interval))
      yield* Effect.sleep(debounce)
      yield* Queue.takeAll(dirty)
    }
  })
