/**
 * The multi-cluster controller: follows the remote-cluster Secrets of the mesh namespace
 * (labelled `mesh/multiCluster=true` or `istio/multiCluster=true`; each data key a cluster ID,
 * its value a kubeconfig) and runs, per remote cluster, an orchestrator client, informers and
 * an orchestrator registry in a scope of their own. Their services are served by one dynamic
 * aggregate (`registry`) the discovery aggregate takes as a member after the local registry.
 *
 * - A kubeconfig using options `PILOT_INSECURE_MULTICLUSTER_ORCHCONFIG_OPTIONS` does not allow,
 *   or that cannot be loaded, is logged with its Secret and key and skipped; other clusters go on.
 * - A cluster joins the aggregate once its registry has synced. A changed kubeconfig starts a
 *   new cluster beside the old one, which keeps serving until the new one has synced (or the
 *   key goes away); a removed key or Secret stops the cluster and drops its services.
 * - Readiness (spec part 1 rule 2): `registry.awaitSynced` completes once the Secrets are listed
 *   and every remote cluster present then has synced, or when `PILOT_REMOTE_CLUSTER_TIMEOUT`
 *   expires (0: no limit), naming the clusters that did not sync.
 * - Gauge `meshd_managed_clusters{cluster_type="local"|"remote"}`.
 */
import { Deferred, Duration, Effect, ExecutionStrategy, Exit, Option, Queue, Scope } from "effect"
import type { ConfigStore } from "../../services/config-store/config-store.js"
import { withScope } from "../../services/logging/logging.js"
import type { MeshWatcher } from "../../services/mesh-config/watcher.js"
import { Metrics } from "../../services/metrics/metrics.js"
import { parseInsecureOptions, sanitizeKubeconfig } from "../../services/multicluster/kubeconfig.js"
import {
  MULTICLUSTER_SECRET_SELECTORS,
  planClusters,
  type WantedCluster,
  wantedClusters,
} from "../../services/multicluster/secrets.js"
import { OrchestratorClient } from "../../services/orchestrator/client.js"
import { Informers } from "../../services/orchestrator/informer.js"
import type { OrchSecret } from "../../services/orchestrator/objects.js"
import { Resources } from "../../services/orchestrator/resources.js"
import { makeDynamicAggregateRegistry } from "../../services/registry/aggregate.js"
import type { ServiceRegistryShape } from "../../services/registry/registry.js"
import { makeOrchestratorClient } from "../orchestrator/client.js"
import { type InformerSettings, makeInformers } from "../orchestrator/informer.js"
import { makeOrchestratorRegistry, type OrchestratorRegistryOptions } from "./orchestrator.js"

export const MULTICLUSTER_REGISTRY = "Multicluster"

export interface MulticlusterOptions {
  /** `--clusterID`: the local cluster; a Secret naming it is refused. */
  readonly clusterId: string
  /** `--namespace` / `POD_NAMESPACE`: where the remote-cluster Secrets live. */
  readonly namespace: string
  /** Options of every remote cluster's registry (the cluster ID comes from the Secret key). */
  readonly registry: Omit<OrchestratorRegistryOptions, "clusterId">
  /** `--orchestratorApiQPS` / `--orchestratorApiBurst`, per remote cluster. */
  readonly qps: number
  readonly burst: number
  /** `PILOT_INSECURE_MULTICLUSTER_ORCHCONFIG_OPTIONS` as given. */
  readonly insecureOptions: string
  /** `PILOT_REMOTE_CLUSTER_TIMEOUT`; 0 waits for remote clusters without limit. */
  readonly remoteClusterTimeout: Duration.DurationInput
  /** Informer settings of remote clusters (tests shorten the backoff). */
  readonly informers?: InformerSettings
}

export interface RemoteClusterStatus {
  readonly clusterId: string
  readonly secret: string
  readonly synced: boolean
}

export interface MulticlusterController {
  /** The remote clusters' services; synced per rule 2. Add it to the aggregate after the local registry. */
  readonly registry: ServiceRegistryShape
  readonly clusters: Effect.Effect<ReadonlyArray<RemoteClusterStatus>>
}

interface Running {
  readonly want: WantedCluster
  readonly scope: Scope.CloseableScope
  /** Older instances of the cluster, still serving until this one has synced. */
  retiring: ReadonlyArray<Scope.CloseableScope>
  synced: boolean
}

export const makeMulticlusterController = (
  options: MulticlusterOptions,
): Effect.Effect<MulticlusterController, never, Informers | ConfigStore | MeshWatcher | Metrics | Scope.Scope> =>
  Effect.gen(function* () {
    const informers = yield* Informers
    const metrics = yield* Metrics
    const controllerScope = yield* Effect.scope
    const context = yield* Effect.context<ConfigStore | MeshWatcher | Metrics>()
    const allowed = parseInsecureOptions(options.insecureOptions)
    const timeout = Duration.decode(options.remoteClusterTimeout)

    const managed = metrics.gauge("meshd_managed_clusters", "Clusters managed", ["cluster_type"])
    managed.set({ cluster_type: "local" }, 1)
    managed.set({ cluster_type: "remote" }, 0)

    const ready = yield* Deferred.make<void>()
    const aggregate = yield* makeDynamicAggregateRegistry({ name: MULTICLUSTER_REGISTRY, ready: Deferred.await(ready) })

    const running = new Map<string, Running>()
    /** Per cluster ID: completes when the cluster first syncs or goes away (readiness). */
    const settled = new Map<string, Deferred.Deferred<void>>()
    /** Kubeconfigs that failed, so an unrelated Secret change does not log them again. */
    const failed = new Map<string, string>()
    let reported = new Set<string>()
    // Reconciling and a cluster joining the aggregate exclude each other, so a superseded
    // instance can never join after its successor.
    const lock = yield* Effect.makeSemaphore(1)

    const settle = (clusterId: string) =>
      Effect.suspend(() => {
        const d = settled.get(clusterId)
        return d === undefined ? Effect.void : Deferred.succeed(d, undefined)
      })

    const closeAll = (scopes: ReadonlyArray<Scope.CloseableScope>) =>
      Effect.forEach(scopes, (s) => Scope.close(s, Exit.void), { discard: true })

    /** Builds client, informers and registry of one cluster; logs and gives None when it cannot. */
    const launch = (want: WantedCluster): Effect.Effect<Option.Option<Running>> =>
      Effect.gen(function* () {
        const where = `cluster ${want.clusterId} of secret ${want.secret} (key ${want.clusterId})`
        const checked = sanitizeKubeconfig(want.kubeconfig, allowed)
        if (checked._tag !== "Allowed") {
          yield* Effect.logError(`skipping remote ${where}: ${checked.reason}`)
          return Option.none()
        }
        const scope = yield* Scope.fork(controllerScope, ExecutionStrategy.sequential)
        const client = yield* makeOrchestratorClient({
          source: { _tag: "text", name: `secret ${want.secret} key ${want.clusterId}`, yaml: checked.yaml },
          clusterId: want.clusterId,
          qps: options.qps,
          burst: options.burst,
        }).pipe(Scope.extend(scope), Effect.either)
        if (client._tag === "Left") {
          yield* Scope.close(scope, Exit.void)
          yield* Effect.logError(`skipping remote ${where}: ${client.left.reason}`)
          return Option.none()
        }
        const remoteInformers = yield* makeInformers(client.right, options.informers).pipe(Scope.extend(scope))
        const registry = yield* makeOrchestratorRegistry({ ...options.registry, clusterId: want.clusterId }).pipe(
          Effect.provideService(Informers, remoteInformers),
          Effect.provideService(OrchestratorClient, client.right),
          Effect.provide(context),
          Scope.extend(scope),
        )
        const self: Running = { want, scope, retiring: [], synced: false }
        yield* registry.awaitSynced.pipe(
          Effect.zipRight(
            lock.withPermits(1)(
              Effect.gen(function* () {
                if (running.get(want.clusterId) !== self) return
                yield* aggregate.add(want.clusterId, registry)
                self.synced = true
                const old = self.retiring
                self.retiring = []
                yield* settle(want.clusterId)
                yield* Effect.logInfo(`remote ${where} synced (${client.right.server})`)
                yield* closeAll(old)
              }),
            ),
          ),
          withScope("kube"),
          Effect.forkIn(scope),
        )
        yield* Effect.logInfo(`started remote ${where}: ${client.right.server}`)
        return Option.some(self)
      })

    const stop = (clusterId: string) =>
      Effect.gen(function* () {
        const current = running.get(clusterId)
        if (current === undefined) return
        running.delete(clusterId)
        yield* aggregate.remove(clusterId)
        yield* closeAll([current.scope, ...current.retiring])
        yield* settle(clusterId)
        settled.delete(clusterId)
        yield* Effect.logInfo(`stopped remote cluster ${clusterId} (secret ${current.want.secret})`)
      })

    const start = (want: WantedCluster) =>
      Effect.gen(function* () {
        if (failed.get(want.clusterId) === want.kubeconfig) return
        const previous = running.get(want.clusterId)
        if (!settled.has(want.clusterId)) settled.set(want.clusterId, yield* Deferred.make<void>())
        const launched = yield* launch(want)
        if (Option.isNone(launched)) {
          failed.set(want.clusterId, want.kubeconfig)
          // A new cluster that cannot start does not hold readiness; a restart keeps the old one.
          if (previous === undefined) {
            yield* settle(want.clusterId)
            settled.delete(want.clusterId)
          }
          return
        }
        failed.delete(want.clusterId)
        const next = launched.value
        if (previous !== undefined) {
          // The instance serving now keeps serving until `next` has synced.
          if (previous.synced) next.retiring = [previous.scope]
          else {
            yield* Scope.close(previous.scope, Exit.void)
            next.retiring = previous.retiring
          }
          yield* Effect.logInfo(`restarting remote cluster ${want.clusterId}: secret ${want.secret} changed`)
        }
        running.set(want.clusterId, next)
      })

    const reconcile = (secrets: ReadonlyArray<OrchSecret>) =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          const owners = new Map([...running].map(([id, r]) => [id, r.want.secret]))
          const wanted = wantedClusters(secrets, options.clusterId, owners)
          const problems = new Set(wanted.problems)
          for (const problem of problems) if (!reported.has(problem)) yield* Effect.logWarning(problem)
          reported = problems
          for (const id of failed.keys()) if (!wanted.clusters.has(id)) failed.delete(id)
          const plan = planClusters(new Map([...running].map(([id, r]) => [id, r.want])), wanted.clusters)
          yield* Effect.forEach(plan.stop, stop, { discard: true })
          yield* Effect.forEach([...plan.start, ...plan.restart], start, { discard: true })
          managed.set({ cluster_type: "remote" }, running.size)
        }),
      )

    const secretInformers = yield* Effect.forEach(MULTICLUSTER_SECRET_SELECTORS, (labelSelector) =>
      informers.informer<OrchSecret>(Resources.secrets, { namespace: options.namespace, labelSelector }),
    )
    /** Every remote-cluster Secret, either label (a Secret with both counts once). */
    const currentSecrets = () => secretInformers.flatMap((i) => i.list(options.namespace))

    const run = Effect.gen(function* () {
      yield* Effect.forEach(secretInformers, (i) => i.synced, { discard: true, concurrency: "unbounded" })
      const changed = yield* Queue.sliding<void>(1)
      for (const informer of secretInformers) {
        const { batches } = yield* informer.subscribe
        yield* Queue.take(batches).pipe(
          Effect.zipRight(Queue.offer(changed, undefined)),
          Effect.forever,
          Effect.forkScoped,
        )
      }
      yield* reconcile(currentSecrets())
      const initial = [...running.keys()]
      yield* Effect.logInfo(
        `multicluster secrets synced: ${initial.length} remote cluster(s)${initial.length > 0 ? ` (${initial.join(", ")})` : ""}`,
      )
      yield* waitForInitial(initial).pipe(Effect.zipRight(Deferred.succeed(ready, undefined)), Effect.forkScoped)
      return yield* Queue.take(changed).pipe(
        Effect.zipRight(Effect.suspend(() => reconcile(currentSecrets()))),
        Effect.forever,
      )
    })

    /** Rule 2: wait for the clusters present at start, at most `remoteClusterTimeout` (0: no limit). */
    const waitForInitial = (initial: ReadonlyArray<string>) => {
      const all = Effect.forEach(
        initial,
        (id) =>
          Effect.suspend(() =>
            Option.match(Option.fromNullable(settled.get(id)), {
              onNone: () => Effect.void,
              onSome: Deferred.await,
            }),
          ),
        { discard: true, concurrency: "unbounded" },
      )
      if (initial.length === 0 || Duration.toMillis(timeout) <= 0) return all
      return all.pipe(
        Effect.timeoutOption(timeout),
        Effect.flatMap((done) => {
          if (Option.isSome(done)) return Effect.void
          const late = initial.filter((id) => running.get(id)?.synced === false)
          return Effect.logError(
            `remote clusters failed to sync after ${Duration.format(timeout)} (PILOT_REMOTE_CLUSTER_TIMEOUT): ${late.join(", ")}; ready without them`,
          )
        }),
      )
    }

    yield* run.pipe(withScope("kube"), Effect.forkScoped)
    return {
      registry: aggregate.registry,
      clusters: Effect.sync(() =>
        [...running.values()].map((r) => ({ clusterId: r.want.clusterId, secret: r.want.secret, synced: r.synced })),
      ),
    }
  })
