/**
 * The orchestrator config store: every mesh kind read from custom resources, under the mesh
 * groups (`networking.mesh.io`, ...) and the upstream alias groups (`networking.istio.io`, ...),
 * and the Gateway-API kinds (`gateway.networking.k8s.io`, see `crdSources`), validated exactly
 * as `--configDir` documents and published as the same `ConfigStore`.
 *
 * - Discovery: for each group, `/apis/<group>` and the resource list of each served version say
 *   which kinds exist at which versions (see config-model/crd-versions.ts for the choice). A
 *   group or kind that is not served (CRD not installed) is simply empty: logged once, looked
 *   up again every `rediscoverInterval` and watched once it appears; it never delays sync. A
 *   served version this code does not know is logged once per group and never watched. A
 *   discovery request that fails otherwise (API server down, 5xx) is retried with backoff.
 * - Each (group, kind) is watched by a shared informer (namespace `watchNamespace`,
 *   `MESH_WATCH_NAMESPACE`); each object is one pseudo-file of the store, so the snapshot's
 *   rules apply: an invalid object is skipped, an update that makes an object invalid keeps its
 *   last valid version served (see config-store/orchestrator-objects.ts). The same name under a
 *   mesh group and its upstream alias: the mesh group's object wins.
 * - Every batch the informer queued since the last apply becomes one `apply`; an apply that
 *   changes nothing (a relist finding the same objects) publishes no event.
 * - An invalid object: one error line naming kind, namespace/name, group/version and the first
 *   field at fault (not repeated while its problems stay the same), and `mesh_validation_failed`
 *   {group, version, resource, reason="invalid_resource"} counted once per rejected version.
 * - `awaitSynced` completes once every group has been looked up and every watched informer has
 *   synced and been applied.
 */
import { Context, Deferred, Duration, Effect, Layer, Option, Queue, Schedule, type Scope } from "effect"
import {
  type ApiGroupDocument,
  type ApiResourceListDocument,
  type CrdSource,
  type CrdSourceOptions,
  crdGroups,
  type GroupPlan,
  planGroup,
  servedPlurals,
  sourceApiKind,
} from "../../services/config-model/crd-versions.js"
import { formatIssue } from "../../services/config-model/resource.js"
import { ConfigStore, type ConfigStoreShape } from "../../services/config-store/config-store.js"
import { makeConfigStoreCore } from "../../services/config-store/memory.js"
import {
  coalesceUpdates,
  describeIssues,
  type ObjectSource,
  type ObjectUpdate,
  objectRemoval,
  objectUpdate,
} from "../../services/config-store/orchestrator-objects.js"
import { WatchedConfigKinds, type WatchedKind } from "../../services/config-store/watched-kinds.js"
import { withScope } from "../../services/logging/logging.js"
import { Metrics } from "../../services/metrics/metrics.js"
import { OrchestratorClient, type OrchestratorError } from "../../services/orchestrator/client.js"
import { Informers } from "../../services/orchestrator/informer.js"
import type { OrchObject } from "../../services/orchestrator/objects.js"
import type { ResourceRef } from "../../services/orchestrator/resources.js"
import { VALIDATION_FAILED_METRIC } from "./file-store.js"

/** Conflicts (one name under two groups) logged per apply; the rest are counted. */
const MAX_LOGGED_CONFLICTS = 3

/** How often groups with kinds not yet served are looked up again. */
export const REDISCOVER_INTERVAL = Duration.seconds(60)

export interface OrchestratorStoreOptions {
  /** Watch one namespace only (`MESH_WATCH_NAMESPACE`); empty or absent = every namespace. */
  readonly watchNamespace?: string
  /** Default `REDISCOVER_INTERVAL`. */
  readonly rediscoverInterval?: Duration.DurationInput
  /**
   * Which Gateway-API kinds are watched besides the mesh kinds (`PILOT_ENABLE_GATEWAY_API`,
   * `PILOT_ENABLE_ALPHA_GATEWAY_API`); default: the non-alpha ones.
   */
  readonly crdSources?: CrdSourceOptions
}

/** One watched (group, kind). */
export type { WatchedKind }

export interface OrchestratorConfigStore {
  readonly store: ConfigStoreShape
  /** The (group, kind) pairs watched so far, with their version; sorted. */
  readonly watched: Effect.Effect<ReadonlyArray<WatchedKind>>
}

const describeKinds = (sources: ReadonlyArray<CrdSource>): string => sources.map(sourceApiKind).join(", ")

/** Retries discovery after failures: 0.5 s doubling to 30 s, forever. */
const discoveryRetry = Schedule.exponential(Duration.millis(500)).pipe(
  Schedule.union(Schedule.spaced(Duration.seconds(30))),
)

export const makeOrchestratorConfigStore = (
  options: OrchestratorStoreOptions = {},
): Effect.Effect<OrchestratorConfigStore, never, Scope.Scope | OrchestratorClient | Informers | Metrics> =>
  Effect.gen(function* () {
    const client = yield* OrchestratorClient
    const informers = yield* Informers
    const metrics = yield* Metrics
    // Shared with the validation webhook and the file store (same name, same label set).
    const validationFailed = metrics.counter(VALIDATION_FAILED_METRIC, "Resource validations that failed", [
      "group",
      "version",
      "resource",
      "reason",
    ])
    const core = yield* makeConfigStoreCore
    const applyLock = yield* Effect.makeSemaphore(1)
    const namespace = options.watchNamespace ?? ""
    const interval = options.rediscoverInterval ?? REDISCOVER_INTERVAL
    const sourceOptions = options.crdSources ?? {}

    /** group/kind → version, for every kind being watched. */
    const watched = new Map<string, WatchedKind>()
    /** Per pseudo-file: the issues last logged and the resourceVersion last counted. */
    const reported = new Map<string, { signature: string; resourceVersion: string | undefined }>()
    const loggedUnknown = new Set<string>()

    // --- applying ------------------------------------------------------------------------
    const report = (update: ObjectUpdate, stale: boolean) =>
      Effect.gen(function* () {
        const issues = update.result?.issues ?? []
        const { source } = update
        const what = `${source.kind} ${update.namespace}/${update.name} (${source.group}/${source.version})`
        if (issues.length === 0) {
          if (reported.delete(update.file)) {
            yield* Effect.logInfo(
              update.result === undefined ? `${what}: invalid object deleted` : `${what}: valid again`,
            )
          }
          return
        }
        const signature = issues.map(formatIssue).join("\n")
        const last = reported.get(update.file)
        if (last === undefined || last.resourceVersion !== update.resourceVersion) {
          validationFailed.inc({
            group: source.group,
            version: source.version,
            resource: source.plural,
            reason: "invalid_resource",
          })
        }
        reported.set(update.file, { signature, resourceVersion: update.resourceVersion })
        if (last?.signature === signature) return
        const [first] = issues
        yield* Effect.logError(
          `invalid ${what}: ${describeIssues(issues)}; ${stale ? "serving its last valid version until it is fixed" : "not served"}`,
        ).pipe(
          Effect.annotateLogs({
            kind: source.kind,
            name: `${update.namespace}/${update.name}`,
            group: source.group,
            ...(first !== undefined && first.path !== "" ? { field: first.path } : {}),
          }),
        )
      })

    const apply = (updates: ReadonlyArray<ObjectUpdate>) =>
      updates.length === 0
        ? Effect.void
        : applyLock.withPermits(1)(
            Effect.gen(function* () {
              const before = yield* core.store.snapshot
              const result = yield* core.apply(updates)
              for (const update of updates) {
                yield* report(update, result.snapshot.files.get(update.file)?.stale === true)
              }
              // Expected while moving from the upstream groups to the mesh groups: a few lines
              // and a count, at info.
              let conflicts = 0
              for (const [key, conflict] of result.snapshot.conflicts) {
                const old = before.conflicts.get(key)
                if (old !== undefined && old.winner.source?.file === conflict.winner.source?.file) continue
                if (++conflicts > MAX_LOGGED_CONFLICTS) continue
                yield* Effect.logInfo(
                  `${key} exists under more than one group; serving ${conflict.winner.source?.file ?? "?"}, ignoring ${conflict.ignored.map((r) => r.source?.file ?? "?").join(", ")}`,
                )
              }
              if (conflicts > MAX_LOGGED_CONFLICTS) {
                yield* Effect.logInfo(
                  `... and ${conflicts - MAX_LOGGED_CONFLICTS} more resources exist under both a mesh group and its upstream alias; the mesh group's are served`,
                )
              }
              if (result.changes.length > 0) {
                yield* Effect.logDebug(
                  `applied ${updates.length} object update(s): ${result.changes.length} change(s), version ${result.snapshot.version}`,
                )
              }
            }),
          )

    // --- watching ------------------------------------------------------------------------
    /**
     * Watches one (group, kind) for the life of the store; `synced` once its first list is
     * applied. A cluster-scoped kind (GatewayClass) is watched whole, whatever `watchNamespace`.
     */
    const watchKind = (source: ObjectSource, namespaced: boolean, synced: Deferred.Deferred<void>) =>
      Effect.scoped(
        Effect.gen(function* () {
          const ref: ResourceRef = {
            group: source.group,
            version: source.version,
            plural: source.plural,
            kind: source.kind,
            namespaced,
          }
          const informer = yield* informers.informer<OrchObject>(
            ref,
            namespace === "" || !namespaced ? {} : { namespace },
          )
          // Subscribing after the first list: `objects` is the whole listed state, the queue
          // holds only what follows it.
          yield* informer.synced
          const { objects, batches } = yield* informer.subscribe
          yield* apply(coalesceUpdates(objects.map((o) => objectUpdate(source, o))))
          yield* Deferred.succeed(synced, undefined)
          while (true) {
            const first = yield* Queue.take(batches)
            const rest = yield* Queue.takeAll(batches)
            const updates = [first, ...rest].flatMap((batch) =>
              batch.events.map((e) =>
                e.type === "deleted" ? objectRemoval(source, e.object) : objectUpdate(source, e.object),
              ),
            )
            yield* apply(coalesceUpdates(updates))
          }
        }),
      ).pipe(
        // A bug must not pass unnoticed: this kind would stop following its objects.
        Effect.catchAllCause((cause) =>
          Effect.logError(`${source.kind} (${source.group}/${source.version}): stopped following changes`, cause),
        ),
      )

    /** Starts watching the kinds of a plan not watched yet; returns their sync signals. */
    const startWatches = (plan: GroupPlan, initial: boolean) =>
      Effect.gen(function* () {
        const signals: Array<Deferred.Deferred<void>> = []
        for (const { source, version } of plan.watch) {
          // Objects are named and validated by the kind the API server gives them.
          const kind = sourceApiKind(source)
          const key = `${source.group}/${kind}`
          if (watched.has(key)) continue
          watched.set(key, { group: source.group, kind, version })
          const synced = yield* Deferred.make<void>()
          signals.push(synced)
          if (!initial) yield* Effect.logInfo(`${kind} (${source.group}/${version}) is now served; watching it`)
          yield* Effect.forkScoped(
            watchKind(
              { group: source.group, version, kind, plural: source.info.plural, upstream: source.upstream },
              source.info.namespaced,
              synced,
            ),
          )
        }
        return signals
      })

    // --- discovery -----------------------------------------------------------------------
    /** A discovery document, or undefined when the API server does not serve it (404). */
    const getIfServed = <A>(path: string): Effect.Effect<A | undefined, OrchestratorError> =>
      client.request<A>({ method: "GET", path }).pipe(
        Effect.asSome,
        Effect.catchIf(
          (e) => e.notFound,
          () => Effect.succeedNone,
        ),
        Effect.map(Option.getOrUndefined),
      )

    /** The group's plan; fails only when the API server cannot answer (404 = not served). */
    const discover = (group: string): Effect.Effect<GroupPlan, OrchestratorError> =>
      Effect.gen(function* () {
        const doc = yield* getIfServed<ApiGroupDocument>(`/apis/${group}`)
        const plurals = new Map<string, ReadonlySet<string>>()
        for (const v of doc?.versions ?? []) {
          if (typeof v.version !== "string" || v.version === "") continue
          const list = yield* getIfServed<ApiResourceListDocument>(`/apis/${group}/${v.version}`)
          plurals.set(v.version, servedPlurals(list))
        }
        return planGroup(group, doc, plurals, sourceOptions)
      })

    /** Logs what a plan leaves out; each unknown version once, absent kinds on the first plan only. */
    const logPlan = (plan: GroupPlan, initial: boolean) =>
      Effect.gen(function* () {
        const fresh = plan.unknownVersions.filter((v) => !loggedUnknown.has(`${plan.group}/${v}`))
        if (fresh.length > 0) {
          for (const v of fresh) loggedUnknown.add(`${plan.group}/${v}`)
          const used = [...new Set(plan.watch.map((w) => w.version))]
          yield* Effect.logWarning(
            `${plan.group} serves version(s) ${fresh.join(", ")} that this mesh-discovery does not know; ${used.length > 0 ? `watching ${used.join(", ")} instead` : "not watched"}`,
          )
        }
        if (!initial) return
        for (const { source, versions } of plan.onlyUnknown) {
          yield* Effect.logWarning(
            `${sourceApiKind(source)} (${source.group}) is served only at version(s) ${versions.join(", ")}, unknown to this mesh-discovery; not watched`,
          )
        }
        if (plan.absent.length > 0) {
          const upstream = plan.absent.every((s) => s.upstream)
          const message = `${plan.group}: no custom resources for ${describeKinds(plan.absent)} (CRD not installed); ${plan.absent.length === 1 ? "that kind is" : "those kinds are"} empty until it appears`
          // The upstream alias groups are usually absent: not worth an info line.
          yield* upstream ? Effect.logDebug(message) : Effect.logInfo(message)
        }
      })

    /** Discovery until it answers; each distinct failure of a group logged once. */
    const discoverWithRetry = (group: string) => {
      let lastFailure = ""
      return discover(group).pipe(
        Effect.tapError((e) => {
          if (e.message === lastFailure) return Effect.void
          lastFailure = e.message
          return Effect.logWarning(`cannot look up the custom resources of ${group} (${e.message}); retrying`)
        }),
        Effect.retry(discoveryRetry),
      )
    }

    /** Looks the group up until it is served (or forever); completes `settled` after the first look. */
    const runGroup = (group: string, settled: Deferred.Deferred<void>) =>
      Effect.gen(function* () {
        let plan = yield* discoverWithRetry(group)
        yield* logPlan(plan, true)
        const signals = yield* startWatches(plan, true)
        yield* Effect.forkScoped(
          Effect.zipRight(
            Effect.forEach(signals, Deferred.await, { discard: true }),
            Deferred.succeed(settled, undefined),
          ),
        )
        // Kinds not served yet (CRDs installed later) are looked for again, quietly.
        while (plan.absent.length > 0 || plan.onlyUnknown.length > 0) {
          yield* Effect.sleep(interval)
          const next = yield* Effect.either(discover(group))
          if (next._tag === "Left") continue
          plan = next.right
          yield* logPlan(plan, false)
          yield* startWatches(plan, false)
        }
      })

    const settledAll: Array<Deferred.Deferred<void>> = []
    for (const group of crdGroups(sourceOptions)) {
      const settled = yield* Deferred.make<void>()
      settledAll.push(settled)
      yield* Effect.forkScoped(runGroup(group, settled).pipe(withScope("kube")))
    }
    yield* Effect.forkScoped(
      Effect.gen(function* () {
        yield* Effect.forEach(settledAll, Deferred.await, { discard: true })
        yield* core.markSynced
        const snapshot = yield* core.store.snapshot
        yield* Effect.logInfo(
          `config from the orchestrator synced: ${snapshot.size} resources from ${watched.size} watched kind(s)${namespace === "" ? "" : ` in namespace ${namespace}`}`,
        )
      }).pipe(withScope("kube")),
    )

    return {
      store: core.store,
      watched: Effect.sync(() =>
        [...watched.values()].sort((a, b) =>
          a.group !== b.group ? (a.group < b.group ? -1 : 1) : a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0,
        ),
      ),
    }
  })

/** The orchestrator's custom resources as the ConfigStore, and which kinds it watches. */
export const layerWithKinds = (
  options: OrchestratorStoreOptions = {},
): Layer.Layer<ConfigStore | WatchedConfigKinds, never, OrchestratorClient | Informers | Metrics> =>
  Layer.scopedContext(
    Effect.map(makeOrchestratorConfigStore(options), (s) =>
      Context.make(ConfigStore, s.store).pipe(Context.add(WatchedConfigKinds, s.watched)),
    ),
  )

/** The orchestrator's custom resources as the ConfigStore. */
export const layer = (
  options: OrchestratorStoreOptions = {},
): Layer.Layer<ConfigStore, never, OrchestratorClient | Informers | Metrics> =>
  Layer.scoped(
    ConfigStore,
    Effect.map(makeOrchestratorConfigStore(options), (s) => s.store),
  )
