/**
 * The root-cert distributor: keeps the ConfigMap `mesh-ca-root-cert` (key `root-cert.pem` = the
 * CA's current trust bundle) in every namespace — created in new namespaces, rewritten when the
 * root changes or someone edits it, recreated when deleted; terminating and system namespaces
 * are skipped, and with `MESH_WATCH_NAMESPACE` only that namespace is served.
 *
 * It writes, so only the leader runs it: the wiring passes `rootCertDistributor(...)` to
 * `LeaderElection.whileLeader("root-cert", ...)`, which interrupts it when leadership is lost.
 * Namespaces to reconcile go through a de-duplicating queue; a failed write is retried after a
 * delay, and a conflict (stale cache) is retried at once from a fresh read.
 */
import { Duration, Effect, Option, Queue, Ref, Stream } from "effect"
import { CertificateAuthority } from "../../../services/ca/ca.js"
import { trustBundlePem } from "../../../services/ca/material.js"
import {
  type NamespaceLike,
  planRootCert,
  ROOT_CERT_CONFIGMAP,
  type RootCertPlan,
  wantsRootCert,
} from "../../../services/ca/root-cert-configmap.js"
import { withScope } from "../../../services/logging/logging.js"
import { OrchestratorClient, type OrchestratorError } from "../../../services/orchestrator/client.js"
import { Informers } from "../../../services/orchestrator/informer.js"
import type { OrchConfigMap } from "../../../services/orchestrator/objects.js"
import { Resources } from "../../../services/orchestrator/resources.js"

export interface RootCertDistributorOptions {
  /** `MESH_WATCH_NAMESPACE`: "" or absent = every namespace. */
  readonly watchNamespace?: string
  /** Delay before a failed namespace is tried again. Default 5 s. */
  readonly retryDelay?: Duration.Duration
}

/** The controller; runs until interrupted (leadership lost, or the scope of `whileLeader` closed). */
export const rootCertDistributor = (
  options: RootCertDistributorOptions = {},
): Effect.Effect<void, never, CertificateAuthority | OrchestratorClient | Informers> =>
  Effect.scoped(
    Effect.gen(function* () {
      const ca = yield* CertificateAuthority
      const client = yield* OrchestratorClient
      const informers = yield* Informers
      const watchNamespace = options.watchNamespace ?? ""
      const retryDelay = options.retryDelay ?? Duration.seconds(5)
      const namespaces = yield* informers.informer<NamespaceLike>(
        Resources.namespaces,
        watchNamespace === "" ? {} : { fieldSelector: `metadata.name=${watchNamespace}` },
      )
      const configMaps = yield* informers.informer<OrchConfigMap>(Resources.configMaps, {
        fieldSelector: `metadata.name=${ROOT_CERT_CONFIGMAP}`,
        ...(watchNamespace === "" ? {} : { namespace: watchNamespace }),
      })

      // The de-duplicating work queue: a set of namespaces and a wake-up signal.
      const pending = new Set<string>()
      const wake = yield* Queue.sliding<void>(1)
      const enqueue = (names: Iterable<string>) =>
        Effect.suspend(() => {
          for (const n of names) pending.add(n)
          return pending.size > 0 ? Queue.offer(wake, undefined) : Effect.void
        })
      const everyNamespace = () => namespaces.list().map((ns) => ns.metadata.name)

      const bundle = yield* Ref.make<string | undefined>(undefined)
      // The CA's trust bundle now and after each change (root rotation, plugged CA reload).
      yield* Effect.forkScoped(
        ca.changes.pipe(
          Stream.map(trustBundlePem),
          Stream.changes,
          Stream.runForEach((pem) =>
            Effect.zipRight(
              Ref.set(bundle, pem),
              Effect.suspend(() => enqueue(everyNamespace())),
            ),
          ),
        ),
      )

      const nsSub = yield* namespaces.subscribe
      const cmSub = yield* configMaps.subscribe
      yield* enqueue(nsSub.objects.map((ns) => ns.metadata.name))
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.flatMap(Queue.take(nsSub.batches), (batch) =>
            enqueue(batch.events.filter((e) => e.type !== "deleted").map((e) => e.object.metadata.name)),
          ),
        ),
      )
      // Any change to one of the ConfigMaps (an edit, a delete) sends its namespace back through
      // reconciliation; our own writes come back here too and find nothing to do.
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.flatMap(Queue.take(cmSub.batches), (batch) =>
            enqueue(batch.events.map((e) => e.object.metadata.namespace ?? "").filter((n) => n !== "")),
          ),
        ),
      )

      const execute = (plan: RootCertPlan) => {
        switch (plan._tag) {
          case "None":
            return Effect.succeed(false)
          case "Create":
            return Effect.as(client.create(Resources.configMaps, plan.configMap), true)
          case "Update":
            return Effect.as(client.replace(Resources.configMaps, plan.configMap), true)
        }
      }
      const fresh = (namespace: string) =>
        client.get<OrchConfigMap>(Resources.configMaps, namespace, ROOT_CERT_CONFIGMAP).pipe(
          Effect.map(Option.some),
          Effect.catchIf(
            (e) => e.notFound,
            () => Effect.succeedNone,
          ),
          Effect.map(Option.getOrUndefined),
        )
      const reconcile = (namespace: string, pem: string) =>
        Effect.gen(function* () {
          if (!wantsRootCert(namespaces.get(undefined, namespace), watchNamespace)) return
          const plan = planRootCert(namespace, configMaps.get(namespace, ROOT_CERT_CONFIGMAP), pem)
          const wrote = yield* execute(plan).pipe(
            // The cache was behind (it exists already, or changed since): decide again from a fresh read.
            Effect.catchIf(
              (e) => e.conflict,
              () => Effect.flatMap(fresh(namespace), (cm) => execute(planRootCert(namespace, cm, pem))),
            ),
          )
          if (wrote) yield* Effect.logInfo(`root certificate written to ConfigMap ${namespace}/${ROOT_CERT_CONFIGMAP}`)
        }).pipe(
          Effect.catchAll((e: OrchestratorError) => {
            const ns = namespaces.get(undefined, namespace)
            // A namespace deleted or being deleted meanwhile refuses new objects: nothing to do.
            if (!wantsRootCert(ns, watchNamespace) || (e.notFound && ns === undefined)) return Effect.void
            return Effect.zipRight(
              Effect.logWarning(
                `cannot write ConfigMap ${namespace}/${ROOT_CERT_CONFIGMAP} (HTTP ${e.status} ${e.reason}): ${e.message}; retrying in ${Duration.format(retryDelay)}`,
              ),
              Effect.forkScoped(Effect.zipRight(Effect.sleep(retryDelay), enqueue([namespace]))),
            )
          }),
        )

      yield* Effect.all([namespaces.synced, configMaps.synced], { discard: true })
      yield* Effect.logInfo(
        `root-cert distributor started (${watchNamespace === "" ? "every namespace" : `namespace ${watchNamespace}`})`,
      )
      return yield* Effect.forever(
        Effect.gen(function* () {
          yield* Queue.take(wake)
          const pem = yield* Ref.get(bundle)
          if (pem === undefined) return // the first bundle enqueues everything again
          const batch = [...pending]
          pending.clear()
          for (const namespace of batch) yield* reconcile(namespace, pem)
        }),
      )
    }),
  ).pipe(withScope("ca"))
