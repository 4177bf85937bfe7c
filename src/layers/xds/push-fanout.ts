/**
 * The push fan-out of one ADS server: owns the inputs, the served PushContext (`current`) and
 * the one prepared ahead, and the registry of connections. An update is diffed, debounced
 * (debouncer.ts) and pushed: a push takes the next PushContext and enqueues every connection
 * the change can affect in the push queue, which runs at most `PILOT_PUSH_THROTTLE` connection
 * pushes at a time, as plain calls from the fan-out to the write (no fiber per connection).
 */
import { availableParallelism } from "node:os"
import { Cause, Clock, Deferred, Effect, Either, FiberRef, LogLevel, Option, type Scope } from "effect"
import { Logging, passes, withScope } from "../../services/logging/logging.js"
import type { ResourceCache } from "../../services/xds/cache/resource-cache.js"
import { deltaEntry, encodeEndpointsAhead, recordDerivation } from "../../services/xds/cache/responder.js"
import {
  changedHosts,
  derivePushContext,
  makePushContext,
  type PushContext,
  type PushContextInput,
} from "../../services/xds/model/push-context.js"
import { TypeUrl } from "../../services/xds/protocol/type-urls.js"
import type { ProxyView } from "../../services/xds/proxygen/proxy-view.js"
import { makePushDispatcher, type PushSlicing } from "../../services/xds/push/push-dispatcher.js"
import type { PushRequest } from "../../services/xds/push/push-request.js"
import { diffInputs } from "../../services/xds/push/updates.js"
import { endpointHosts } from "../../services/xds/push/watched-hosts.js"
import type { PushStats, XdsServerConfig } from "../../services/xds/server.js"
import { type Connection, makeConnectionRegistry } from "./connections.js"
import { makeDebouncer } from "./debouncer.js"
import { makeEndpointGauges } from "./endpoint-gauges.js"
import type { XdsProtos } from "./protos.js"
import { recordProxyConflicts } from "./proxy-conflict-gauges.js"
import type { XdsMetrics } from "./xds-metrics.js"

export interface PushFanout {
  /** The PushContext of the latest push: requests are answered from it. */
  readonly current: () => PushContext
  /** Whether the first input arrived (with `awaitFirstInput`, streams are refused until then). */
  readonly ready: () => boolean
  /** Completes once streams are admitted (at once without `awaitFirstInput`). */
  readonly serving: Effect.Effect<void>
  /** Offers new inputs: diffed with the previous ones, debounced, then pushed. */
  readonly update: (next: PushContextInput) => Effect.Effect<void>
  /** A stream whose proxy is known: from now on, pushes reach it. */
  readonly register: (connection: Connection) => void
  /** A closed stream: its pending push is dropped and a push of it in flight frees its slot. */
  readonly unregister: (connection: Connection) => void
  /** A registered connection's watches changed. */
  readonly reindex: (connection: Connection) => void
  readonly connections: () => IterableIterator<Connection>
  readonly stats: () => PushStats
  /** A debug line from push code (plain code): only built when debug lines are written. */
  readonly pushDebug: (line: () => string) => void
}

export interface PushFanoutDeps {
  readonly config: XdsServerConfig
  readonly initial: PushContextInput
  /** Streams are refused until the first `update` (see `AdsServerOptions`). */
  readonly awaitFirstInput: boolean
  readonly metrics: XdsMetrics
  readonly cache: ResourceCache
  readonly encodeAhead: XdsProtos["encodeAhead"]
  /** Whether a type's resolved sets are shared between connections (the cache is on for it). */
  readonly sharable: (typeUrl: string) => boolean
  /** Runs effects from plain code (logging) on the server's runtime. */
  readonly runFork: (effect: Effect.Effect<void>) => unknown
}

/** Pushes take up to 5 ms of work per event-loop turn; the rest goes on after pending I/O. */
export const eventLoopSlicing: PushSlicing = {
  sliceMillis: 5,
  now: () => performance.now(),
  defer: (next) => setImmediate(next),
}

const defaultThrottle = (): number => Math.max(10, availableParallelism() * 50)

/**
 * Whether debug lines of the ADS server would be written anywhere: the push path checks this
 * once per push instead of building log lines for every connection that a logger then drops.
 */
const debugLogged: Effect.Effect<boolean> = Effect.gen(function* () {
  if (LogLevel.greaterThan(yield* FiberRef.get(FiberRef.currentMinimumLogLevel), LogLevel.Debug)) return false
  const logging = yield* Effect.serviceOption(Logging)
  if (Option.isNone(logging)) return true
  for (const scope of ["ads", "delta", "default"]) {
    const state = yield* Effect.either(logging.value.scope(scope))
    if (Either.isLeft(state) || passes("debug", state.right.outputLevel)) return true
  }
  return false
})

/**
 * Resumes in the event loop's next check phase: after HTTP/2 has sent what was written in this
 * turn (its sessions flush in native immediates, which run before `setImmediate`'s).
 */
const afterPendingWrites = Effect.async<void>((resume) => {
  eventLoopSlicing.defer(() => resume(Effect.void))
})

export const makePushFanout = (deps: PushFanoutDeps): Effect.Effect<PushFanout, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { config, metrics, cache, runFork } = deps
    /** Pushes run as plain calls (write callbacks, no fibers): they read the clock directly. */
    const clock = yield* Effect.clock
    const registry = makeConnectionRegistry()
    const recordGauges = makeEndpointGauges(metrics)
    const dispatcher = makePushDispatcher<Connection>(
      config.pushThrottle > 0 ? config.pushThrottle : defaultThrottle(),
      (connection, request, done) => connection.startPush(request, done),
      (connection, defect) => runFork(Effect.logError(`push to ${connection.id} failed`, Cause.die(defect))),
      eventLoopSlicing,
    )
    let input = deps.initial
    let pushes = 0
    let lastPushStartedAt = 0
    let current = makePushContext(
      input,
      config.pushContext,
      `${new Date(yield* Clock.currentTimeMillis).toISOString()}/0`,
    )
    let ready = !deps.awaitFirstInput
    const admitted = yield* Deferred.make<void>()
    if (ready) yield* Deferred.succeed(admitted, undefined)
    let debug = yield* debugLogged
    /**
     * Hostnames whose endpoints changed since `current` was built, when nothing else did (the
     * next PushContext is then derived from `current`); undefined when a rebuild is needed.
     */
    let changedSinceContext: Set<string> | undefined = new Set()
    const noteChange = (request: PushRequest) => {
      const hosts = request.full || changedSinceContext === undefined ? undefined : endpointHosts(request)
      if (hosts === undefined) changedSinceContext = undefined
      else for (const host of hosts) changedSinceContext?.add(host)
    }
    /**
     * The next PushContext, derived as endpoint changes come in (as the reference updates its
     * endpoint index when the event arrives, not when the push runs): the push then only stamps
     * its version on it. Its chain starts at `current`; undefined when nothing is prepared, when
     * a rebuild is due, or when the inputs moved in a way it cannot follow.
     */
    let prepared: PushContext | undefined
    const prepare = (before: PushContextInput, next: PushContextInput, request: PushRequest) => {
      const hosts = request.full || changedSinceContext === undefined ? undefined : endpointHosts(request)
      const base = prepared ?? current
      prepared =
        hosts === undefined || base.input !== before ? undefined : derivePushContext(base, next, hosts, base.version)
      // Its changed clusters are encoded now too, when some connection watches them: they are
      // what the push would build first. So are their entries in either protocol's responses.
      if (prepared !== undefined && hosts !== undefined && deps.sharable(TypeUrl.Endpoint) && registry.watched(hosts)) {
        const encoded = encodeEndpointsAhead(prepared, cache, hosts)
        deps.encodeAhead.sotw(encoded.map((r) => r.resource))
        deps.encodeAhead.delta(encoded.map((r) => deltaEntry(cache, r)))
      }
    }
    recordGauges(current)
    const recordConflicts = (push: PushContext) => {
      const views: Array<ProxyView> = []
      for (const connection of registry.all()) {
        const view = connection.proxyView()
        if (view !== undefined) views.push(view)
      }
      recordProxyConflicts(metrics, push, views)
    }

    /**
     * Starts a push (plain code, run by the debounce timer): takes the next PushContext and
     * enqueues every connection the request can affect; each enqueue starts its push at once
     * while the throttle has room. Returns the PushContext pushed.
     */
    const startPush = (request: PushRequest, debounceMillis: number): PushContext => {
      // Sub-millisecond: push durations are a few milliseconds (bench-xds reads it).
      lastPushStartedAt = Number(clock.unsafeCurrentTimeNanos()) / 1e6
      const now = clock.unsafeCurrentTimeMillis()
      pushes++
      const previous = current
      const version = `${new Date(now).toISOString()}/${pushes}`
      const since = changedSinceContext
      changedSinceContext = new Set()
      const ahead = prepared?.input === input ? prepared : undefined
      prepared = undefined
      // An endpoint-only change costs the changed hosts, not the mesh.
      current =
        since === undefined || request.full
          ? // Built from the previous context: unchanged resources keep their views and fingerprints.
            makePushContext(input, config.pushContext, version, previous)
          : ahead !== undefined
            ? { ...ahead, version }
            : derivePushContext(previous, input, since, version)
      if (since !== undefined && !request.full) recordDerivation(cache, current, previous, since)
      const hosts = (request.full ? undefined : endpointHosts(request)) ?? changedHosts(previous, current)
      const withHosts: PushRequest = hosts === undefined ? request : { ...request, changedHosts: hosts }
      // An endpoint-only push asks only the connections watching a changed host.
      const candidates =
        withHosts.full || withHosts.changedHosts === undefined
          ? registry.all()
          : registry.candidates(withHosts.changedHosts)
      for (const connection of candidates)
        if (connection.affectedBy(current, withHosts)) dispatcher.enqueue(connection, withHosts)
      // Bookkeeping after the first responses are on their way.
      metrics.debounceTime.observe(debounceMillis / 1000)
      // The gauges are recounted for the hosts that changed (all of them when that is unknown).
      if (since === undefined || request.full) recordGauges(current, previous, hosts)
      else recordGauges(current, previous, since)
      return current
    }

    // The push starts when the debouncer asks for it (see `PushStarter`); what it returns runs after.
    const debouncer = yield* makeDebouncer(config.debounce, ({ request, debounceMillis, events }) => {
      const pushed = startPush(request, debounceMillis)
      return Effect.gen(function* () {
        // Whether debug lines are written is looked up once HTTP/2 has sent the first responses,
        // off the push's path: the connections' push lines follow a change of log level from
        // the next push on.
        yield* afterPendingWrites
        if (request.full) recordConflicts(pushed)
        debug = yield* debugLogged
        if (debug)
          yield* Effect.logDebug(
            `push ${pushed.version}: full=${request.full} events=${events} configs=${[...request.configsUpdated].join(",")}`,
          )
      }).pipe(withScope("ads"))
    })

    const update = (next: PushContextInput) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        if (!ready) {
          // No stream was admitted yet: the first input becomes the served state at once.
          input = next
          current = makePushContext(input, config.pushContext, `${new Date(now).toISOString()}/0`, current)
          changedSinceContext = new Set()
          prepared = undefined
          recordGauges(current)
          ready = true
          yield* Deferred.succeed(admitted, undefined)
          yield* Effect.logInfo("first configuration received: serving xDS").pipe(withScope("ads"))
          return
        }
        const before = input
        const request = diffInputs(before, next, now)
        input = next
        if (request === undefined) return
        noteChange(request)
        // The quiet period starts now; the next PushContext is derived within it. (A push that
        // runs first leaves nothing to derive from: `prepare` then prepares nothing.)
        yield* debouncer.offer(request)
        prepare(before, next, request)
        metrics.inboundUpdates.inc({ type: request.full ? "config" : "eds" })
      })

    const fanout: PushFanout = {
      current: () => current,
      ready: () => ready,
      serving: Deferred.await(admitted),
      update,
      register: (connection) => {
        registry.add(connection)
        metrics.connected.set(registry.size())
      },
      unregister: (connection) => {
        if (registry.delete(connection)) metrics.connected.set(registry.size())
        dispatcher.remove(connection)
      },
      reindex: registry.reindex,
      connections: registry.all,
      stats: () => ({ pushes, version: current.version, lastPushStartedAt }),
      pushDebug: (line) => {
        if (debug) runFork(Effect.logDebug(line()).pipe(withScope("ads")))
      },
    }
    return fanout
  })
