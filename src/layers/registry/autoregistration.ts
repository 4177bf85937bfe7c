/**
 * WorkloadEntry auto-registration and health checks on the orchestrator (spec 000 part 1 rule
 * 5; `PILOT_ENABLE_WORKLOAD_ENTRY_AUTOREGISTRATION`, `PILOT_ENABLE_WORKLOAD_ENTRY_HEALTHCHECKS`,
 * `PILOT_WORKLOAD_ENTRY_GRACE_PERIOD`). The ProxyConnections hooks the xDS server calls queue
 * the writes on one worker, in call order, so a connect and the disconnect that follows it are
 * applied in that order and a slow API server never holds a stream up:
 * - connect: the proxy's entry is marked connected to this instance (created from its
 *   WorkloadGroup when missing: `auto_registration_success_total`, else `_updates_total`);
 * - disconnect of its last stream here: marked disconnected with the time (`_unregister_total`);
 * - health report: the entry's `Healthy` condition, written to its status.
 * Every instance also sweeps the entries (an informer): an auto-registered entry disconnected for
 * the grace period is deleted (`_deletes_total`), whoever marked it, so entries left by an
 * instance that went away are cleaned up after the grace period too. Writes are PUTs on the read
 * resourceVersion and deletes carry it as a precondition: an entry that reconnected in between
 * is never removed. Failures are logged with the entry's name, counted in `_errors_total`, and
 * retried with backoff when the API server may recover (conflict, 429, 5xx, unreachable).
 */
import { Clock, Duration, Effect, Either, Layer, Option, Queue, Schedule, Schema, type Scope } from "effect"
import { WorkloadGroup } from "../../services/config-model/schemas/workload-entry.js"
import { withScope } from "../../services/logging/logging.js"
import { Metrics } from "../../services/metrics/metrics.js"
import { OrchestratorClient, type OrchestratorError } from "../../services/orchestrator/client.js"
import { Informers } from "../../services/orchestrator/informer.js"
import { type ResourceRef, resourcePath } from "../../services/orchestrator/resources.js"
import {
  type Condition,
  isAutoRegistered,
  isHealthChecked,
  type OrchWorkloadEntry,
  type OrchWorkloadGroup,
  WorkloadEntries,
  WorkloadGroups,
} from "../../services/registry/autoregistration/objects.js"
import {
  type CleanupSettings,
  type ConnectedProxy,
  cleanupOf,
  conditionsAfter,
  conditionsWithoutHealth,
  entryFromGroup,
  type HealthReport,
  markConnected,
  markDisconnected,
  type Target,
  targetOf,
} from "../../services/registry/autoregistration/planner.js"
import {
  ProxyConnections,
  type ProxyConnectionsShape,
} from "../../services/registry/autoregistration/proxy-connections.js"

export const SUCCESS_METRIC = "auto_registration_success_total"
export const UPDATES_METRIC = "auto_registration_updates_total"
export const UNREGISTER_METRIC = "auto_registration_unregister_total"
export const DELETES_METRIC = "auto_registration_deletes_total"
export const ERRORS_METRIC = "auto_registration_errors_total"

export interface AutoRegistrationOptions {
  /** `PILOT_ENABLE_WORKLOAD_ENTRY_AUTOREGISTRATION`. */
  readonly autoRegistration: boolean
  /** `PILOT_ENABLE_WORKLOAD_ENTRY_HEALTHCHECKS`. */
  readonly healthChecks: boolean
  /** `PILOT_WORKLOAD_ENTRY_GRACE_PERIOD`. */
  readonly gracePeriod: Duration.DurationInput
  /** This instance as entries name their controller (`POD_NAME`). */
  readonly instanceId: string
  /**
   * Connections older than this are presumed lost (the proxy and the instance holding it went
   * down together); the reference uses 1.5 × its max server connection age. Default: never.
   */
  readonly maxConnectionAge?: Duration.DurationInput
  /** First retry delay of a failed write; default 100 ms, doubled, at most 5 retries. */
  readonly retryDelay?: Duration.DurationInput
  /** The served resources; default networking.mesh.io/v1. */
  readonly entries?: ResourceRef
  readonly groups?: ResourceRef
}

type Managed = Exclude<Target, { _tag: "None" } | { _tag: "Invalid" }>

const log = {
  info: (message: string) => Effect.logInfo(message).pipe(withScope("wle")),
  warn: (message: string) => Effect.logWarning(message).pipe(withScope("wle")),
  debug: (message: string) => Effect.logDebug(message).pipe(withScope("wle")),
}

const retriable = (e: OrchestratorError) => e.conflict || e.status === 429 || e.status === 0 || e.status >= 500

/** The object, or undefined when the server has none. */
const orUndefined = <A>(get: Effect.Effect<A, OrchestratorError>) =>
  get.pipe(
    Effect.asSome,
    Effect.catchIf(
      (e) => e.notFound,
      () => Effect.succeedNone,
    ),
    Effect.map(Option.getOrUndefined),
  )

const timeAt = (ms: number) => ({ ms, text: new Date(ms).toISOString() })

/**
 * The hooks, with their worker and the cleanup sweep running in the scope. With both variables
 * off the hooks do nothing and nothing is watched.
 */
export const makeAutoRegistration = (
  options: AutoRegistrationOptions,
): Effect.Effect<ProxyConnectionsShape, never, OrchestratorClient | Informers | Metrics | Scope.Scope> =>
  Effect.gen(function* () {
    if (!options.autoRegistration && !options.healthChecks) {
      return { onConnect: () => Effect.void, onDisconnect: () => Effect.void, onHealth: () => Effect.void }
    }
    const client = yield* OrchestratorClient
    const informers = yield* Informers
    const metrics = yield* Metrics
    const entriesRef = options.entries ?? WorkloadEntries
    const groupsRef = options.groups ?? WorkloadGroups
    const counter = (name: string, help: string) => metrics.counter(name, help)
    const success = counter(SUCCESS_METRIC, "Successful auto-registrations")
    const updates = counter(UPDATES_METRIC, "Auto-registration updates")
    const unregisters = counter(UNREGISTER_METRIC, "Unregistrations")
    const deletes = counter(DELETES_METRIC, "Auto-registrations cleaned up by the periodic timer")
    const errors = counter(ERRORS_METRIC, "Auto-registration errors")
    const settings: CleanupSettings = {
      gracePeriodMs: Duration.toMillis(Duration.decode(options.gracePeriod)),
      ...(options.maxConnectionAge === undefined
        ? {}
        : { maxConnectionAgeMs: Duration.toMillis(Duration.decode(options.maxConnectionAge)) }),
    }
    const retryDelay = Duration.decode(options.retryDelay ?? "100 millis")
    const retry = Schedule.exponential(retryDelay, 2).pipe(Schedule.intersect(Schedule.recurs(5)))
    const controller = options.instanceId

    /** One unit of work: retried while the API server may recover, then logged and counted. */
    const attempt = (what: string, work: Effect.Effect<void, OrchestratorError>) =>
      work.pipe(
        Effect.retry({ schedule: retry, while: retriable }),
        Effect.catchAll((e) =>
          Effect.zipRight(
            Effect.sync(() => errors.inc()),
            log.warn(`${what} failed: ${e.message} (HTTP ${e.status} ${e.reason})`),
          ),
        ),
      )

    const getEntry = (namespace: string, name: string) =>
      orUndefined(client.get<OrchWorkloadEntry>(entriesRef, namespace, name))

    const register = (target: Managed, proxy: ConnectedProxy, at: ReturnType<typeof timeAt>) =>
      Effect.gen(function* () {
        const entry = yield* getEntry(target.namespace, target.name)
        if (entry !== undefined) {
          const next = markConnected(entry, controller, at)
          if (next === undefined) return
          yield* client.replace(entriesRef, next)
          updates.inc()
          return yield* log.info(`WorkloadEntry ${target.namespace}/${target.name} connected to ${controller}`)
        }
        if (target._tag === "HealthChecked")
          return yield* log.debug(`WorkloadEntry ${target.namespace}/${target.name} of ${proxy.id} does not exist`)
        const group = yield* orUndefined(client.get<OrchWorkloadGroup>(groupsRef, target.namespace, target.group))
        if (group === undefined) {
          errors.inc()
          return yield* log.warn(
            `auto-registration of ${proxy.id} failed: WorkloadGroup ${target.namespace}/${target.group} not found`,
          )
        }
        const decoded = Schema.decodeUnknownEither(WorkloadGroup)(group.spec ?? {})
        if (Either.isLeft(decoded)) {
          errors.inc()
          return yield* log.warn(
            `auto-registration of ${proxy.id} failed: WorkloadGroup ${target.namespace}/${target.group} is malformed: ${decoded.left.message.split("\n")[0]}`,
          )
        }
        yield* client.create(
          entriesRef,
          entryFromGroup(target.name, proxy, { ...group, spec: decoded.right }, controller, at.text),
        )
        success.inc()
        yield* log.info(
          `auto-registered WorkloadEntry ${target.namespace}/${target.name} from WorkloadGroup ${target.group}`,
        )
      })

    const unregister = (target: Managed, at: ReturnType<typeof timeAt>) =>
      Effect.gen(function* () {
        const entry = yield* getEntry(target.namespace, target.name)
        if (entry === undefined) return
        const next = markDisconnected(entry, controller, at)
        if (next === undefined) return
        yield* client.replace(entriesRef, next)
        unregisters.inc()
        yield* log.info(`WorkloadEntry ${target.namespace}/${target.name} disconnected at ${at.text}`)
      })

    /** Writes conditions to the status subresource; to the object where none is served. */
    const writeConditions = (namespace: string, name: string, conditions: ReadonlyArray<Condition>) => {
      const body = { status: { conditions } }
      return client
        .request({
          method: "PATCH",
          path: `${resourcePath(entriesRef, namespace, name)}/status`,
          contentType: "application/merge-patch+json",
          body,
        })
        .pipe(
          Effect.catchIf(
            (e) => e.notFound,
            () => client.mergePatch(entriesRef, namespace, name, body),
          ),
          Effect.asVoid,
        )
    }

    const health = (target: Managed, report: HealthReport, at: ReturnType<typeof timeAt>) =>
      Effect.gen(function* () {
        const entry = yield* getEntry(target.namespace, target.name)
        if (entry === undefined) return
        if (!isHealthChecked(entry)) return
        const conditions = conditionsAfter(entry, report, at.text)
        if (conditions === undefined) return
        yield* writeConditions(target.namespace, target.name, conditions)
        yield* log.debug(`WorkloadEntry ${target.namespace}/${target.name} healthy=${report.healthy}`)
      })

    // The work queue: one worker, in call order.
    const work = yield* Queue.unbounded<Effect.Effect<void>>()
    yield* Effect.forkScoped(Effect.forever(Effect.flatten(Queue.take(work))))
    const enqueue = (effect: Effect.Effect<void>) => Effect.asVoid(Queue.offer(work, effect))

    // This instance's streams by entry: only the last one to close marks the entry disconnected.
    const byConnection = new Map<string, { readonly target: Managed; readonly key: string }>()
    const byEntry = new Map<string, Set<string>>()

    const hooks: ProxyConnectionsShape = {
      onConnect: (connectionId, proxy) =>
        Effect.gen(function* () {
          const target = targetOf(proxy, options)
          if (target._tag === "None") return
          if (target._tag === "Invalid") {
            errors.inc()
            return yield* log.warn(target.reason)
          }
          const key = `${target.namespace}/${target.name}`
          byConnection.set(connectionId, { target, key })
          const streams = byEntry.get(key) ?? new Set<string>()
          streams.add(connectionId)
          byEntry.set(key, streams)
          const at = timeAt(yield* Clock.currentTimeMillis)
          yield* enqueue(attempt(`registration of WorkloadEntry ${key}`, register(target, proxy, at)))
        }),
      onDisconnect: (connectionId) =>
        Effect.gen(function* () {
          const known = byConnection.get(connectionId)
          if (known === undefined) return
          byConnection.delete(connectionId)
          const streams = byEntry.get(known.key)
          streams?.delete(connectionId)
          if (streams !== undefined && streams.size > 0) return
          byEntry.delete(known.key)
          const at = timeAt(yield* Clock.currentTimeMillis)
          yield* enqueue(attempt(`unregistration of WorkloadEntry ${known.key}`, unregister(known.target, at)))
        }),
      onHealth: (connectionId, report) =>
        Effect.gen(function* () {
          if (!options.healthChecks) return
          const known = byConnection.get(connectionId)
          if (known === undefined) return
          const at = timeAt(yield* Clock.currentTimeMillis)
          yield* enqueue(attempt(`health of WorkloadEntry ${known.key}`, health(known.target, report, at)))
        }),
    }

    // The sweep: every instance, over every entry, woken by changes and by the next deadline.
    const cleanup = (entry: OrchWorkloadEntry) =>
      Effect.gen(function* () {
        const { namespace = "", name, resourceVersion } = entry.metadata
        if (isAutoRegistered(entry)) {
          const deleted = yield* client
            .request({
              method: "DELETE",
              path: resourcePath(entriesRef, namespace, name),
              body: {
                apiVersion: "v1",
                kind: "DeleteOptions",
                ...(resourceVersion === undefined ? {} : { preconditions: { resourceVersion } }),
              },
            })
            .pipe(
              Effect.as(true),
              // Gone already, or changed since read (reconnected): the next sweep decides again.
              Effect.catchIf(
                (e) => e.notFound || e.conflict,
                () => Effect.succeed(false),
              ),
            )
          if (!deleted) return
          deletes.inc()
          return yield* log.info(`cleaned up auto-registered WorkloadEntry ${namespace}/${name}`)
        }
        yield* writeConditions(namespace, name, conditionsWithoutHealth(entry))
        yield* log.info(`cleared the health condition of WorkloadEntry ${namespace}/${name}: its proxy is gone`)
      })

    const informer = yield* informers.informer<OrchWorkloadEntry>(entriesRef)
    const wake = yield* Queue.sliding<void>(1)
    const sweep = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      let next: number | undefined
      for (const entry of informer.list()) {
        const plan = cleanupOf(entry, now, settings)
        if (plan._tag === "Later") next = Math.min(next ?? plan.at, plan.at)
        else if (plan._tag === "Now") {
          const failed = yield* cleanup(entry).pipe(
            Effect.as(false),
            Effect.catchAll((e) =>
              Effect.zipRight(
                Effect.sync(() => errors.inc()),
                Effect.as(
                  log.warn(
                    `cleanup of WorkloadEntry ${entry.metadata.namespace}/${entry.metadata.name} failed: ${e.message}`,
                  ),
                  true,
                ),
              ),
            ),
          )
          if (failed) {
            const retryAt = now + Duration.toMillis(retryDelay) * 10
            next = Math.min(next ?? retryAt, retryAt)
          }
        }
      }
      return { now, next }
    })
    yield* Effect.forkScoped(
      Effect.gen(function* () {
        const { batches } = yield* informer.subscribe
        yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Queue.take(batches), Queue.offer(wake, undefined))))
        yield* informer.synced
        for (;;) {
          const { now, next } = yield* sweep
          const woken = Queue.take(wake)
          yield* next === undefined ? woken : Effect.raceFirst(woken, Effect.sleep(Duration.millis(next - now)))
        }
      }).pipe(Effect.scoped),
    )
    return hooks
  })

/** The hooks as the ProxyConnections service, for the xDS server. */
export const layerWith = (
  options: AutoRegistrationOptions,
): Layer.Layer<ProxyConnections, never, OrchestratorClient | Informers | Metrics> =>
  Layer.scoped(ProxyConnections, makeAutoRegistration(options))
