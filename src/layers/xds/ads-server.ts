/**
 * The ADS gRPC server: `envoy.service.discovery.v3.AggregatedDiscoveryService` with
 * StreamAggregatedResources (state of the world) and DeltaAggregatedResources, over
 * @grpc/grpc-js with protos loaded from @grpc/grpc-js-xds. One fiber per stream for its
 * requests (plain ACKs are recorded where they are read); pushes run through the debouncer, a
 * PushContext per push, and the push queue (at most one pending request per connection) with at
 * most `PILOT_PUSH_THROTTLE` connection pushes in flight, as plain calls from the fan-out to the
 * write. Resources are encoded once per distinct output and shared by every stream.
 *
 * What a caller sends is bounded: a stream's first request must name a valid node
 * (INVALID_ARGUMENT otherwise), requests of unknown types are dropped, a stream's queued
 * requests are bounded with the call paused while its fiber is busy (inbox.ts), a write that a
 * peer does not take within PILOT_XDS_SEND_TIMEOUT resets its stream (writer.ts), and metric
 * labels take only known values (request-limits.ts).
 */
import { randomUUID } from "node:crypto"
import { availableParallelism } from "node:os"
import * as grpc from "@grpc/grpc-js"
import {
  Cause,
  Clock,
  Context,
  Duration,
  Effect,
  Either,
  FiberRef,
  FiberSet,
  Layer,
  LogLevel,
  Option,
  type Scope,
  Stream,
} from "effect"
import type { AuthContext } from "../../services/ca/authenticate.js"
import { formatWindow, makeThrottledLogger } from "../../services/logging/log-throttle.js"
import { Logging, passes, withScope } from "../../services/logging/logging.js"
import { Metrics } from "../../services/metrics/metrics.js"
import { makeResourceCache } from "../../services/xds/cache/resource-cache.js"
import {
  deltaEntry,
  deltaResponse,
  encodeEndpointsAhead,
  type NonceSource,
  type ProxyInfo,
  proxyInfo,
  recordDerivation,
  sotwResponse,
} from "../../services/xds/cache/responder.js"
import { takeGeneratorNotices } from "../../services/xds/grpcgen/generator-notices.js"
import {
  changedHosts,
  derivePushContext,
  emptyPushContextInput,
  makePushContext,
  type PushContext,
  type PushContextInput,
} from "../../services/xds/model/push-context.js"
import {
  deltaStatus,
  makeNotFoundLog,
  type NotFoundLog,
  sotwStatus,
} from "../../services/xds/protocol/connection-status.js"
import { emptyDeltaState, onDeltaRequest, onDeltaSent } from "../../services/xds/protocol/delta.js"
import type {
  DeltaDiscoveryRequest,
  DeltaDiscoveryResponse,
  DiscoveryRequest,
  DiscoveryResponse,
} from "../../services/xds/protocol/messages.js"
import { nodeName, nodeProblem } from "../../services/xds/protocol/node-id.js"
import { makeTokenBucket, reserve } from "../../services/xds/protocol/rate-limit.js"
import {
  boundedLabel,
  nackCodeLabel,
  quoted,
  truncate,
  typeForLog,
  typeLabel,
} from "../../services/xds/protocol/request-limits.js"
import { emptySotwState, onSotwRequest, onSotwSent, sotwNeedsPush } from "../../services/xds/protocol/sotw.js"
import { isKnownType, PUSH_ORDER, shortType, TypeUrl } from "../../services/xds/protocol/type-urls.js"
import { openGuard, type XdsGrant, type XdsGuard, type XdsRefusal } from "../../services/xds/protocol/xds-auth.js"
import { type EndpointWatch, makeEndpointWatchers } from "../../services/xds/push/endpoint-watchers.js"
import { makePushDispatcher, type PushSlicing } from "../../services/xds/push/push-dispatcher.js"
import type { PushRequest } from "../../services/xds/push/push-request.js"
import { diffInputs } from "../../services/xds/push/updates.js"
import { clusterHostsOf, endpointHosts, namedHostsOf } from "../../services/xds/push/watched-hosts.js"
import {
  type ConnectionStatus,
  XdsServer,
  type XdsServerConfig,
  XdsServerError,
  type XdsServerShape,
} from "../../services/xds/server.js"
import { peerUris } from "../secure-grpc/listener.js"
import { clearCacheIndexEvery } from "./cache-index.js"
import { makeDebouncer } from "./debouncer.js"
import { makeInbox } from "./inbox.js"
import { loadXdsProtos } from "./protos.js"
import { endOrReset, resetStream } from "./stream-reset.js"
import { makeWriters, type WritableCall, type Writer } from "./writer.js"
import { makeXdsMetrics } from "./xds-metrics.js"

interface Connection {
  readonly id: string
  /**
   * Whether a push request can change anything this connection watches. Synchronous, over the
   * connection's latest watches: a full push asks every connection, an endpoint-only push the
   * connections `endpointWatchers` names for its hosts.
   */
  readonly affectedBy: (push: PushContext, request: PushRequest) => boolean
  /** What its EDS watch covers now, for the endpoint-push index (`endpointWatchers`). */
  readonly endpointWatch: () => EndpointWatch
  readonly status: () => ConnectionStatus
  /**
   * Starts a push to this stream: writes at once every response the request calls for, and
   * calls `done` once gRPC has taken them all.
   */
  readonly startPush: (request: PushRequest, done: () => void) => void
}

/**
 * Runs `write` now: it says whether it wrote, and when it did, calls back once what it wrote is
 * written. The effect waits for that callback.
 */
const writtenNow = (write: (onWritten: () => void) => boolean): Effect.Effect<void> => {
  let finished = false
  let wake: (() => void) | undefined
  const done = () => {
    finished = true
    wake?.()
  }
  if (!write(done)) done()
  return Effect.async<void>((resume) => {
    if (finished) resume(Effect.void)
    else wake = () => resume(Effect.void)
  })
}

/**
 * A stream's fast path for plain ACKs (see `inboxOf`): once its proxy is known, a request that
 * only acknowledges (an ACK changes nothing but the acknowledged versions: nothing to answer,
 * nothing to log) is applied to the stream's state where it is read.
 */
const plainAck =
  <S, Req>(
    step: (
      state: S,
      request: Req,
    ) => { readonly state: S; readonly event: { readonly _tag: string }; readonly respond: boolean },
    state: () => S | undefined,
    apply: (next: S) => void,
  ) =>
  (request: Req): boolean => {
    const current = state()
    if (current === undefined) return false
    const next = step(current, request)
    if (next.event._tag !== "Ack" || next.respond) return false
    apply(next.state)
    return true
  }

/** Pushes take up to 5 ms of work per event-loop turn; the rest goes on after pending I/O. */
const eventLoopSlicing: PushSlicing = {
  sliceMillis: 5,
  now: () => performance.now(),
  defer: (next) => setImmediate(next),
}

const MAX_TIMER_MS = 2 ** 31 - 1

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

/** grpc-js options of an ADS listener (also used for the secure listener). */
export const grpcOptions = (config: XdsServerConfig): grpc.ServerOptions => {
  const options: Record<string, number> = {
    "grpc.keepalive_time_ms": Math.min(MAX_TIMER_MS, Duration.toMillis(config.keepaliveInterval)),
    "grpc.keepalive_timeout_ms": Math.min(MAX_TIMER_MS, Duration.toMillis(config.keepaliveTimeout)),
    "grpc.max_receive_message_length": config.maxRecvMsgSize,
    "grpc.max_concurrent_streams": config.maxStreams,
  }
  const age = Duration.toMillis(config.maxConnectionAge)
  if (Number.isFinite(age) && age < MAX_TIMER_MS) options["grpc.max_connection_age_ms"] = age
  return options
}

const defaultThrottle = (): number => Math.max(10, availableParallelism() * 50)
const defaultRequestRate = (): number => Math.max(100, availableParallelism() * 100)
/** How long a new stream over the rate may wait for its token before RESOURCE_EXHAUSTED. */
const MAX_STREAM_WAIT_MS = 1000
/**
 * Delta requests a stream may queue while its fiber is busy (see inbox.ts): the call is paused
 * at the first, so only what grpc-js had read already can follow it; one more ends the stream.
 */
const MAX_PENDING_DELTA = 16
/**
 * At shutdown, how long peers may take to read what they were sent before their streams are
 * reset: a peer that does not read would otherwise keep the server from closing until it is
 * forced, as late as `--shutdownDuration`.
 */
const shutdownGraceMillis = (shutdownDuration: Duration.Duration): number =>
  Math.min(1000, Duration.toMillis(shutdownDuration) / 4)

/** The ADS service for another listener (the secure one), each stream guarded by `guard`. */
export interface AdsGrpcServiceShape {
  readonly definition: grpc.ServiceDefinition
  /** Handlers whose streams are ended when the calling scope closes. */
  readonly serve: (guard: XdsGuard) => Effect.Effect<grpc.UntypedServiceImplementation, never, Scope.Scope>
}

export class AdsGrpcService extends Context.Tag("mesh/AdsGrpcService")<AdsGrpcService, AdsGrpcServiceShape>() {}

export interface AdsServerOptions {
  /** Guard of the plaintext `--grpcAddr` listener (`XDS_AUTH_PLAINTEXT`); default: open. */
  readonly plaintextGuard?: XdsGuard
  /**
   * Refuse streams (UNAVAILABLE) until the first input arrives, as the reference does before its
   * caches sync: a proxy served the empty starting state would drop its whole configuration.
   */
  readonly awaitFirstInput?: boolean
}

export const makeXdsServer = (
  config: XdsServerConfig,
  initial: PushContextInput = emptyPushContextInput,
  options: AdsServerOptions = {},
): Effect.Effect<
  XdsServerShape & { readonly grpcService: AdsGrpcServiceShape },
  XdsServerError,
  Metrics | Scope.Scope
> =>
  Effect.gen(function* () {
    const metrics = makeXdsMetrics(yield* Metrics)
    /** Pushes run as plain calls (write callbacks, no fibers): they read the clock directly. */
    const clock = yield* Effect.clock
    /** Runs effects from those plain calls (logging) on this server's runtime. */
    const runFork = yield* FiberSet.makeRuntime<never>()
    const protos = yield* Effect.try({
      try: () => loadXdsProtos(),
      catch: (cause) => new XdsServerError({ message: `loading xDS protos: ${String(cause)}`, cause }),
    })
    const cache = makeResourceCache(protos.codec, config.cache, {
      read: (hit) => metrics.cacheReads.inc({ type: hit ? "hit" : "miss" }),
      evicted: (reason, count) => metrics.cacheEvictions.inc({ type: reason }, count),
      size: (typeUrl, entries) => metrics.cacheSize.set({ type: typeLabel(typeUrl) }, entries),
    })
    yield* clearCacheIndexEvery(cache, config.cache.indexClearInterval)
    /**
     * Connections watching the same names share one resolved set per PushContext, but only
     * where the cache is on: with it off (for debugging) every response encodes afresh.
     */
    const sharable = (typeUrl: string): boolean =>
      config.cache.enabled &&
      config.cache.maxSize > 0 &&
      (typeUrl !== TypeUrl.Cluster || config.cache.enableCds) &&
      (typeUrl !== TypeUrl.Route || config.cache.enableRds)
    /** A shared set stands for cache hits the connection would have read itself. */
    const countSharedReads = (reads: number) => {
      if (reads > 0 && config.cache.stats === true) metrics.cacheReads.inc({ type: "hit" }, reads)
    }
    /** What the (pure) generators had to skip in the config, logged once each with our logger. */
    const logGeneratorWarnings = () => {
      const notices = takeGeneratorNotices()
      if (notices.length > 0)
        runFork(
          Effect.forEach(
            notices,
            (n) =>
              (n.level === "info" ? Effect.logInfo(n.message) : Effect.logWarning(n.message)).pipe(withScope(n.scope)),
            { discard: true },
          ),
        )
    }
    const connections = new Map<string, Connection>()
    /** Registered connections by the hosts their EDS watch names: the fan-out of endpoint pushes. */
    const endpointWatchers = makeEndpointWatchers<Connection>()
    /** Re-indexes a registered connection after its watches changed. */
    const reindex = (connection: Connection) => {
      if (connections.get(connection.id) === connection) endpointWatchers.set(connection, connection.endpointWatch())
    }
    /** The push queue, `PILOT_PUSH_THROTTLE` connection pushes in flight at most. */
    const dispatcher = makePushDispatcher<Connection>(
      config.pushThrottle > 0 ? config.pushThrottle : defaultThrottle(),
      (connection, request, done) => connection.startPush(request, done),
      (connection, defect) => runFork(Effect.logError(`push to ${connection.id} failed`, Cause.die(defect))),
      eventLoopSlicing,
    )
    let input = initial
    let pushes = 0
    let lastPushStartedAt = 0
    let current: PushContext = makePushContext(
      input,
      config.pushContext,
      `${new Date(yield* Clock.currentTimeMillis).toISOString()}/0`,
    )
    let connectionCounter = 0
    let ready = options.awaitFirstInput !== true
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
      if (
        prepared !== undefined &&
        hosts !== undefined &&
        sharable(TypeUrl.Endpoint) &&
        endpointWatchers.watched(hosts)
      ) {
        const encoded = encodeEndpointsAhead(prepared, cache, hosts)
        protos.encodeAhead.sotw(encoded.map((r) => r.resource))
        protos.encodeAhead.delta(encoded.map(deltaEntry))
      }
    }
    let debug = yield* debugLogged
    /** Whether a named watch can be affected by the hosts a (merged) push request changed. */
    const touches = (push: PushContext, request: PushRequest, names: Iterable<string>, wildcard: boolean): boolean => {
      const hosts = request.changedHosts
      if (wildcard || hosts === undefined) return true
      const watched = clusterHostsOf(names) ?? namedHostsOf(push, names)
      if (watched === null) return true
      const [fewer, more] = hosts.size <= watched.size ? [hosts, watched] : [watched, hosts]
      for (const host of fewer) if (more.has(host)) return true
      return false
    }

    /**
     * One push to one stream, either protocol: writes every watched type the request can
     * affect, in push order (an incremental request only reaches EDS); once all are written,
     * records the convergence time and calls `done`. `respond` writes one type's response and
     * says whether it wrote one.
     */
    const startPushWatched = (
      request: PushRequest,
      push: PushContext,
      watched: (typeUrl: string) => { readonly names: Iterable<string>; readonly wildcard: boolean } | undefined,
      respond: (typeUrl: string, onWritten: () => void) => boolean,
      done: () => void,
    ) => {
      let outstanding = 1
      const written = () => {
        if (--outstanding > 0) return
        metrics.convergence.observe(Math.max(0, clock.unsafeCurrentTimeMillis() - request.start) / 1000)
        done()
      }
      for (const typeUrl of PUSH_ORDER) {
        if (!request.full && typeUrl !== TypeUrl.Endpoint) continue
        const watch = watched(typeUrl)
        if (watch === undefined || !touches(push, request, watch.names, watch.wildcard)) continue
        outstanding++
        if (!respond(typeUrl, written)) outstanding--
      }
      written()
    }

    /** A debug line from a push (plain code): only built when debug lines are written. */
    const logPushDebug = (line: () => string) => {
      if (debug) runFork(Effect.logDebug(line()).pipe(withScope("ads")))
    }
    /** Records why a response lacks requested names; says each new reason at debug. */
    const noteNotFound = (log: NotFoundLog, typeUrl: string, id: string, notFound: ReadonlyArray<string>) => {
      for (const text of log.record(typeUrl, notFound)) logPushDebug(() => `${text} (connection ${id})`)
    }

    /** Ports of a host's service without endpoints, and its unhealthy endpoints. */
    const hostStats = (push: PushContext, host: string) => {
      const endpoints = push.endpointsByHost.get(host) ?? []
      let noInstances = 0
      for (const port of push.serviceByHost.get(host)?.ports ?? [])
        if (!endpoints.some((e) => e.servicePortName === port.name)) noInstances++
      let notReady = 0
      for (const e of endpoints) if (e.healthStatus === "UNHEALTHY") notReady++
      return { noInstances, notReady }
    }
    const stats = { noInstances: 0, notReady: 0 }
    /** Gauges over every host; after a derived PushContext, only the changed hosts are recounted. */
    const recordPushContextStats = (push: PushContext, previous?: PushContext, hosts?: ReadonlySet<string>) => {
      const add = (from: PushContext, host: string, sign: number) => {
        const s = hostStats(from, host)
        stats.noInstances += sign * s.noInstances
        stats.notReady += sign * s.notReady
      }
      if (previous !== undefined && hosts !== undefined) {
        for (const host of hosts) {
          add(previous, host, -1)
          add(push, host, 1)
        }
      } else {
        stats.noInstances = 0
        stats.notReady = 0
        for (const host of new Set([...push.serviceByHost.keys(), ...push.endpointsByHost.keys()])) add(push, host, 1)
      }
      metrics.edsNoInstances.set(stats.noInstances)
      metrics.endpointNotReady.set(stats.notReady)
    }
    recordPushContextStats(current)

    // -------------------------------------------------------------------------------------------
    // Pushes

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
          ? makePushContext(input, config.pushContext, version)
          : ahead !== undefined
            ? { ...ahead, version }
            : derivePushContext(previous, input, since, version)
      if (since !== undefined && !request.full) recordDerivation(current, previous, since)
      const hosts = (request.full ? undefined : endpointHosts(request)) ?? changedHosts(previous, current)
      const withHosts: PushRequest = hosts === undefined ? request : { ...request, changedHosts: hosts }
      // An endpoint-only push asks only the connections watching a changed host.
      const candidates =
        withHosts.full || withHosts.changedHosts === undefined
          ? connections.values()
          : endpointWatchers.candidates(withHosts.changedHosts)
      for (const connection of candidates)
        if (connection.affectedBy(current, withHosts)) dispatcher.enqueue(connection, withHosts)
      // Bookkeeping after the first responses are on their way.
      metrics.debounceTime.observe(debounceMillis / 1000)
      // The gauges are recounted for the hosts that changed (all of them when that is unknown).
      if (since === undefined || request.full) recordPushContextStats(current, previous, hosts)
      else recordPushContextStats(current, previous, since)
      return current
    }

    /**
     * Resumes in the event loop's next check phase: after HTTP/2 has sent what was written in
     * this turn (its sessions flush in native immediates, which run before `setImmediate`'s).
     */
    const afterPendingWrites = Effect.async<void>((resume) => {
      eventLoopSlicing.defer(() => resume(Effect.void))
    })

    // The push starts when the debouncer asks for it (see `PushStarter`); what it returns runs after.
    const debouncer = yield* makeDebouncer(config.debounce, ({ request, debounceMillis, events }) => {
      const pushed = startPush(request, debounceMillis)
      return Effect.gen(function* () {
        // Whether debug lines are written is looked up once HTTP/2 has sent the first responses,
        // off the push's path: the connections' push lines follow a change of log level from
        // the next push on.
        yield* afterPendingWrites
        debug = yield* debugLogged
        if (debug)
          yield* Effect.logDebug(
            `push ${pushed.version}: full=${request.full} events=${events} configs=${[...request.configsUpdated].join(",")}`,
          )
      }).pipe(withScope("ads"))
    })

    // -------------------------------------------------------------------------------------------
    // Streams

    const rate = config.maxRequestsPerSecond > 0 ? config.maxRequestsPerSecond : defaultRequestRate()
    let bucket = makeTokenBucket(rate, yield* Clock.currentTimeMillis)
    /** Admits a new stream, waiting briefly when over the rate; false = refused. */
    const admit = (call: grpc.ServerDuplexStream<unknown, unknown>) =>
      Effect.gen(function* () {
        if (!ready) {
          yield* Effect.logInfo(`refusing stream from ${call.getPeer()}: no configuration received yet`)
          call.emit("error", {
            code: grpc.status.UNAVAILABLE,
            details: "server is not ready to serve discovery information",
          })
          return false
        }
        const now = yield* Clock.currentTimeMillis
        const step = reserve(bucket, now, MAX_STREAM_WAIT_MS)
        bucket = step.bucket
        if (step.refused) {
          yield* Effect.logWarning(`refusing stream from ${call.getPeer()}: over ${rate} new streams per second`)
          call.emit("error", { code: grpc.status.RESOURCE_EXHAUSTED, details: "rate limit exceeded" })
          return false
        }
        if (step.waitMs > 0) yield* Effect.sleep(Duration.millis(step.waitMs))
        return true
      })

    /**
     * Warnings about streams refused, closed or ignored, one line per kind and interval after
     * the first: a caller that opens thousands of bad streams costs a few lines, not thousands
     * (the metrics still count each).
     */
    const streamLog = yield* makeThrottledLogger({
      summary: ({ key, count, windowMs }) =>
        `${count} more xDS streams: ${key} (in the last ${formatWindow(windowMs)})`,
    })
    const warnStream = (kind: string, message: string) => streamLog.log(kind, message).pipe(withScope("ads"))
    const writerOf = yield* makeWriters({
      sendTimeout: config.sendTimeout ?? Duration.seconds(5),
      onTimeout: () => metrics.writeTimeout.inc(),
      warn: (message) => warnStream("closed after a write timeout", message),
    })
    const writer = <T>(call: grpc.ServerDuplexStream<unknown, T>) =>
      Effect.sync(() => writerOf<T>(call as unknown as WritableCall<T>))

    const calls = new Set<grpc.ServerDuplexStream<unknown, unknown>>()

    /**
     * Ends a stream with `status`. Its status waits behind what the stream wrote; a peer that
     * does not read never gets it, so such a stream is reset as well.
     */
    const abort = (call: grpc.ServerDuplexStream<unknown, unknown>, status: Partial<grpc.StatusObject>) => {
      if (!call.writableEnded) call.emit("error", status)
      if (call.writableLength > 0) resetStream(call)
    }

    /**
     * A stream's requests for its fiber, bounded (see inbox.ts). The first request names the
     * proxy: its node is taken as it is read (a later request of the same type may replace it
     * in the queue) and checked at once, as the reference does: a stream whose node cannot be
     * served is refused with INVALID_ARGUMENT. Requests of a type this server does not serve are
     * dropped, never kept, answered or made a label; the first one per stream is logged (cut
     * short), as the reference logs and ignores them.
     */
    const inboxOf = <Req extends DiscoveryRequest | DeltaDiscoveryRequest>(
      call: grpc.ServerDuplexStream<Req, unknown>,
      protocol: "sotw" | "delta",
      acceptNow: (request: Req) => boolean,
    ) =>
      Effect.sync(() => {
        const stream = call as grpc.ServerDuplexStream<unknown, unknown>
        calls.add(stream)
        let proxy: ProxyInfo | undefined
        let unknownTypeLogged = false
        const inbox = makeInbox<Req>(call, {
          screen: (request) => {
            if (proxy === undefined) {
              proxy = proxyInfo(request.node)
              const problem = nodeProblem(request.node, proxy.metadata)
              if (problem !== undefined) {
                runFork(warnStream("refused for their node", `refusing xDS stream from ${call.getPeer()}: ${problem}`))
                abort(stream, { code: grpc.status.INVALID_ARGUMENT, details: problem })
                return false
              }
            }
            const typeUrl = request.type_url ?? ""
            if (isKnownType(typeUrl)) return true
            if (!unknownTypeLogged) {
              unknownTypeLogged = true
              runFork(
                warnStream(
                  "ignored requests for unknown types",
                  `ignoring requests for unknown type ${typeForLog(typeUrl)} from ${call.getPeer()} node=${quoted(proxy.id)}`,
                ),
              )
            }
            return false
          },
          acceptNow,
          ...(protocol === "sotw" ? { coalesceKey: (request: Req) => request.type_url ?? "" } : {}),
          // SotW requests coalesce per (known) type: never more than one per type.
          maxPending: protocol === "sotw" ? PUSH_ORDER.length : MAX_PENDING_DELTA,
          onOverflow: (pending) => {
            const details = `too many requests queued: ${pending} while earlier ones were unanswered (at most ${MAX_PENDING_DELTA})`
            runFork(warnStream("closed for queueing too much", `closing xDS stream from ${call.getPeer()}: ${details}`))
            abort(stream, { code: grpc.status.RESOURCE_EXHAUSTED, details })
          },
        })
        /** The proxy the stream's first request named (set once the fiber has a request). */
        return { ...inbox, proxy: () => proxy as ProxyInfo }
      })

    /** The stream of each registered connection (for `disconnect`). */
    const callOf = new Map<string, grpc.ServerDuplexStream<unknown, unknown>>()

    const register = (connection: Connection, call: grpc.ServerDuplexStream<unknown, unknown>) =>
      Effect.sync(() => {
        connections.set(connection.id, connection)
        reindex(connection)
        callOf.set(connection.id, call)
        metrics.connected.set(connections.size)
      })

    const unregister = (connection: Connection, call: grpc.ServerDuplexStream<unknown, unknown>) =>
      Effect.gen(function* () {
        if (connections.delete(connection.id)) metrics.connected.set(connections.size)
        endpointWatchers.delete(connection)
        callOf.delete(connection.id)
        dispatcher.remove(connection)
        calls.delete(call)
        forgetRejects(connection.id)
        if (!call.writableEnded) call.end()
        yield* Effect.logDebug(`connection ${connection.id} closed`)
      })

    /**
     * The `pilot_xds_*_reject{node,err}` series each connection set, by type. As in the
     * reference, `node` names the proxy (the `pod.namespace` part of its id) and `err` is the
     * NACK's status code name, never its message (logged, and shown in `/debug/syncz`). A
     * plaintext caller chooses its node id, so the label is cut short, a connection holds one
     * series per type (its latest NACK's), and its series go when it disconnects: the series
     * are bounded by the open streams, not by every node id ever seen.
     */
    const rejectSeries = new Map<string, Map<string, { readonly node: string; readonly err: string }>>()
    const forgetRejects = (connectionId: string) => {
      const series = rejectSeries.get(connectionId)
      if (series === undefined) return
      rejectSeries.delete(connectionId)
      for (const [type, labels] of series) metrics.rejects[type]?.remove(labels)
    }

    const recordNack = (
      connectionId: string,
      proxy: ProxyInfo | undefined,
      typeUrl: string,
      error: string,
      code: number | undefined,
    ) =>
      Effect.gen(function* () {
        const type = typeLabel(typeUrl)
        metrics.totalRejects.inc({ type })
        const gauge = metrics.rejects[type]
        if (gauge !== undefined) {
          const labels = { node: boundedLabel(nodeName(proxy?.id ?? "")), err: nackCodeLabel(code) }
          let series = rejectSeries.get(connectionId)
          if (series === undefined) {
            series = new Map()
            rejectSeries.set(connectionId, series)
          }
          const before = series.get(type)
          if (before !== undefined && (before.node !== labels.node || before.err !== labels.err)) gauge.remove(before)
          series.set(type, labels)
          gauge.set(labels, 1)
        }
        // The message is cut short where the request is read (sotw.ts, delta.ts).
        yield* Effect.logWarning(`${type.toUpperCase()}: ACK ERROR ${quoted(proxy?.id ?? "")} ${error}`)
      })

    /** Writes a response of `typeUrl`; once written, counts the push and its send time. */
    const writeObserved = <T>(write: Writer<T>["write"], response: T, typeUrl: string, onWritten: () => void) => {
      const startedAt = clock.unsafeCurrentTimeMillis()
      write(response, () => {
        metrics.sendTime.observe((clock.unsafeCurrentTimeMillis() - startedAt) / 1000)
        metrics.pushes.inc({ type: typeLabel(typeUrl) })
        onWritten()
      })
    }

    /**
     * A stream's requests, handled one at a time until it closes or is refused; then the
     * connection is unregistered.
     */
    const serveRequests = <Req>(
      inbox: { readonly next: Effect.Effect<Req | null>; readonly handled: () => void },
      handle: (request: Req) => Effect.Effect<void>,
      refused: () => boolean,
      connection: Connection,
      call: grpc.ServerDuplexStream<unknown, unknown>,
    ) =>
      Effect.gen(function* () {
        for (;;) {
          const request = yield* inbox.next
          if (request === null) return
          yield* handle(request)
          inbox.handled()
          if (refused()) return
        }
      }).pipe(Effect.ensuring(unregister(connection, call)))

    /** Ends a stream the listener's guard refused, with the refusal's status. */
    const refuse = (call: grpc.ServerDuplexStream<unknown, unknown>, refusal: XdsRefusal) =>
      Effect.zipRight(
        warnStream("refused by the listener's guard", `refusing xDS stream from ${call.getPeer()}: ${refusal.message}`),
        Effect.sync(() => call.emit("error", { code: refusal.code, details: refusal.message })),
      )

    /** Authenticates a new stream; undefined = refused (and ended). */
    const grantOf = (call: grpc.ServerDuplexStream<unknown, unknown>, guard: XdsGuard) => {
      const ctx: AuthContext = {
        metadata: (key) => call.metadata.get(key).map((v) => (typeof v === "string" ? v : v.toString("utf8"))),
        verifiedPeerUris: peerUris(call.getAuthContext().sslPeerCertificate),
        remoteAddress: call.getPeer(),
      }
      return guard
        .admit(ctx)
        .pipe(Effect.catchAll((refusal) => Effect.as(refuse(call, refusal), undefined as XdsGrant | undefined)))
    }

    /** Whether the stream's caller may act as the proxy its first request names; ends it if not. */
    const authorized = (call: grpc.ServerDuplexStream<unknown, unknown>, grant: XdsGrant, proxy: ProxyInfo) =>
      Either.match(grant.authorize(proxy), {
        onLeft: (refusal) => Effect.as(refuse(call, refusal), false),
        onRight: () => Effect.succeed(true),
      })

    const handleSotw = (call: grpc.ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>, guard: XdsGuard) =>
      Effect.gen(function* () {
        if (!(yield* admit(call as never))) return
        const grant = yield* grantOf(call as never, guard)
        if (grant === undefined) return
        let refused = false
        const inbox = yield* inboxOf(
          call,
          "sotw",
          plainAck(
            onSotwRequest,
            () => (proxy === undefined ? undefined : state),
            (next) => {
              state = next
              reindex(connection)
            },
          ),
        )
        const { write } = yield* writer(call)
        /**
         * Changed only by plain code that never yields between reading and writing it, so that
         * the stream's requests and pushes need no lock: each response is written in the same
         * step that records it.
         */
        let state = emptySotwState
        const id = `${call.getPeer()}-${++connectionCounter}`
        const connectedAt = yield* Clock.currentTimeMillis
        let proxy: ProxyInfo | undefined
        const notFound = makeNotFoundLog()

        /**
         * Writes the watch's response now (unless `onlyIfChanged` and unchanged); whether it
         * wrote. A push passes a nonce maker (see `NonceSource`), a request's answer a nonce.
         */
        const respond = (
          typeUrl: string,
          push: PushContext,
          nonce: NonceSource,
          onlyIfChanged: boolean,
          onWritten: () => void,
        ) => {
          const watch = state.watches.get(typeUrl)
          if (watch === undefined) return false
          const built = sotwResponse(push, cache, watch, nonce, proxy, sharable(typeUrl))
          countSharedReads(built.sharedReads)
          logGeneratorWarnings()
          noteNotFound(notFound, typeUrl, id, built.notFound)
          if (onlyIfChanged && !sotwNeedsPush(watch, built.digest)) return false
          state = onSotwSent(state, typeUrl, {
            nonce: built.response.nonce,
            version: push.version,
            digest: built.digest,
          })
          writeObserved(write, built.response, typeUrl, onWritten)
          logPushDebug(
            () =>
              `${shortType(typeUrl).toUpperCase()}: PUSH ${id} resources:${built.response.resources.length} size:${built.bytes}`,
          )
          return true
        }

        const connection: Connection = {
          id,
          status: () => sotwStatus(id, call.getPeer(), proxy, connectedAt, state, notFound.byType()),
          affectedBy: (push, request) => {
            for (const w of state.watches.values())
              if ((request.full || w.typeUrl === TypeUrl.Endpoint) && touches(push, request, w.names, w.wildcard))
                return true
            return false
          },
          endpointWatch: () => {
            const w = state.watches.get(TypeUrl.Endpoint)
            if (w === undefined) return undefined
            return w.wildcard ? "any" : (clusterHostsOf(w.names) ?? "any")
          },
          startPush: (request, done) => {
            const push = current
            startPushWatched(
              request,
              push,
              (typeUrl) => state.watches.get(typeUrl),
              (typeUrl, onWritten) => respond(typeUrl, push, randomUUID, true, onWritten),
              done,
            )
          },
        }

        const handle = (request: DiscoveryRequest) =>
          Effect.gen(function* () {
            if (proxy === undefined) {
              proxy = inbox.proxy()
              if (!(yield* authorized(call as never, grant, proxy))) {
                refused = true
                return
              }
              yield* register(connection, call as never)
              yield* Effect.logInfo(`new connection ${id} node=${proxy.id} generator=${truncate(proxy.generator, 64)}`)
            }
            const typeUrl = request.type_url ?? ""
            const step = onSotwRequest(state, request)
            state = step.state
            // Map the watched names to hosts now, not in the next push's fan-out.
            for (const w of state.watches.values()) clusterHostsOf(w.names)
            reindex(connection)
            // Answered in the same step as the state change: no push can come in between.
            const answered = step.respond
              ? writtenNow((written) => respond(typeUrl, current, randomUUID(), false, written))
              : Effect.void
            switch (step.event._tag) {
              case "Nack":
                yield* recordNack(id, proxy, typeUrl, step.event.error, request.error_detail?.code)
                break
              case "StaleNonce":
                metrics.expiredNonce.inc({ type: typeLabel(typeUrl) })
                yield* Effect.logDebug(
                  `${shortType(typeUrl).toUpperCase()}: expired nonce ${quoted(step.event.nonce, 64)} ${id}`,
                )
                break
              case "Subscribe":
                yield* Effect.logDebug(
                  `${shortType(typeUrl).toUpperCase()}: ${step.event.reconnect ? "RECONNECT" : "REQ"} ${id} names:${(request.resource_names ?? []).length}`,
                )
                break
              case "Ack":
                break
            }
            // The next request waits until this answer is written.
            yield* answered
          })

        yield* serveRequests(inbox, handle, () => refused, connection, call as never)
      }).pipe(withScope("ads"))

    const handleDelta = (
      call: grpc.ServerDuplexStream<DeltaDiscoveryRequest, DeltaDiscoveryResponse>,
      guard: XdsGuard,
    ) =>
      Effect.gen(function* () {
        if (!config.deltaXds) {
          call.emit("error", {
            code: grpc.status.UNIMPLEMENTED,
            details: "delta xDS is disabled (MESH_DELTA_XDS=false)",
          })
          return
        }
        if (!(yield* admit(call as never))) return
        const grant = yield* grantOf(call as never, guard)
        if (grant === undefined) return
        let refused = false
        const inbox = yield* inboxOf(
          call,
          "delta",
          plainAck(
            onDeltaRequest,
            () => (proxy === undefined ? undefined : state),
            (next) => {
              state = next
              reindex(connection)
            },
          ),
        )
        const { write } = yield* writer(call)
        /** Changed only by plain code that never yields in between (see the SotW stream). */
        let state = emptyDeltaState
        const id = `${call.getPeer()}-${++connectionCounter}`
        const connectedAt = yield* Clock.currentTimeMillis
        let proxy: ProxyInfo | undefined
        const notFound = makeNotFoundLog()

        /** Writes what changed for the watch now (everything with `force`); whether it wrote. */
        const respond = (
          typeUrl: string,
          push: PushContext,
          nonce: NonceSource,
          force: boolean,
          onWritten: () => void,
        ) => {
          const watch = state.watches.get(typeUrl)
          if (watch === undefined) return false
          const built = deltaResponse(push, cache, watch, nonce, force, proxy, sharable(typeUrl))
          countSharedReads(built.sharedReads)
          logGeneratorWarnings()
          noteNotFound(notFound, typeUrl, id, built.notFound)
          if (built.response === undefined) return false
          state = onDeltaSent(state, typeUrl, {
            nonce: built.response.nonce,
            versions: built.sent,
            removed: built.removed,
          })
          // Names that were pending are answered now: the connection may leave the "any" index.
          if (watch.pending.size > 0) reindex(connection)
          writeObserved(write, built.response, typeUrl, onWritten)
          logPushDebug(
            () =>
              `${shortType(typeUrl).toUpperCase()}: DELTA PUSH ${id} resources:${built.sent.length} removed:${built.removed.length} size:${built.bytes}`,
          )
          return true
        }

        const connection: Connection = {
          id,
          status: () => deltaStatus(id, call.getPeer(), proxy, connectedAt, state, notFound.byType()),
          affectedBy: (push, request) => {
            for (const w of state.watches.values())
              if (
                (request.full || w.typeUrl === TypeUrl.Endpoint) &&
                (touches(push, request, w.subscribed, w.wildcard) || w.pending.size > 0)
              )
                return true
            return false
          },
          endpointWatch: () => {
            const w = state.watches.get(TypeUrl.Endpoint)
            if (w === undefined) return undefined
            // Pending names are answered on the next push whatever it changed.
            return w.wildcard || w.pending.size > 0 ? "any" : (clusterHostsOf(w.subscribed) ?? "any")
          },
          startPush: (request, done) => {
            const push = current
            startPushWatched(
              request,
              push,
              (typeUrl) => {
                const watch = state.watches.get(typeUrl)
                return watch === undefined ? undefined : { names: watch.subscribed, wildcard: watch.wildcard }
              },
              (typeUrl, onWritten) => respond(typeUrl, push, randomUUID, false, onWritten),
              done,
            )
          },
        }

        const handle = (request: DeltaDiscoveryRequest) =>
          Effect.gen(function* () {
            if (proxy === undefined) {
              proxy = inbox.proxy()
              if (!(yield* authorized(call as never, grant, proxy))) {
                refused = true
                return
              }
              yield* register(connection, call as never)
              yield* Effect.logInfo(
                `new delta connection ${id} node=${proxy.id} generator=${truncate(proxy.generator, 64)}`,
              )
            }
            const typeUrl = request.type_url ?? ""
            const step = onDeltaRequest(state, request)
            state = step.state
            // Map the watched names to hosts now, not in the next push's fan-out.
            for (const w of state.watches.values()) clusterHostsOf(w.subscribed)
            reindex(connection)
            // Answered in the same step as the state change: no push can come in between.
            const answered = step.respond
              ? writtenNow((written) =>
                  respond(typeUrl, current, randomUUID(), step.event._tag === "Subscribe", written),
                )
              : Effect.void
            if (step.event._tag === "Nack")
              yield* recordNack(id, proxy, typeUrl, step.event.error, request.error_detail?.code)
            if (step.event._tag === "StaleNonce") metrics.expiredNonce.inc({ type: typeLabel(typeUrl) })
            // The next request waits until this answer is written.
            yield* answered
          })

        yield* serveRequests(inbox, handle, () => refused, connection, call as never)
      }).pipe(withScope("delta"))

    // -------------------------------------------------------------------------------------------
    // Listener

    /** The service's handlers, every stream guarded by `guard`; `served` collects its streams. */
    const implementation = (guard: XdsGuard, served?: Set<grpc.ServerDuplexStream<unknown, unknown>>) => ({
      StreamAggregatedResources: (call: grpc.ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>) => {
        served?.add(call as never)
        runFork(handleSotw(call, guard).pipe(Effect.ensuring(Effect.sync(() => served?.delete(call as never)))))
      },
      DeltaAggregatedResources: (call: grpc.ServerDuplexStream<DeltaDiscoveryRequest, DeltaDiscoveryResponse>) => {
        served?.add(call as never)
        runFork(handleDelta(call, guard).pipe(Effect.ensuring(Effect.sync(() => served?.delete(call as never)))))
      },
    })
    const grpcService: AdsGrpcServiceShape = {
      definition: protos.ads,
      serve: (guard) =>
        Effect.map(
          Effect.acquireRelease(
            Effect.sync(() => new Set<grpc.ServerDuplexStream<unknown, unknown>>()),
            // The other listener shuts down after its services: end their streams first (and
            // reset those whose peer does not read, which would keep its shutdown waiting).
            (served) => endOrReset([...served], shutdownGraceMillis(config.shutdownDuration)),
          ),
          (served) => implementation(guard, served),
        ),
    }

    const server = new grpc.Server(grpcOptions(config))
    server.addService(protos.ads, implementation(options.plaintextGuard ?? openGuard))
    const target = `${config.host === undefined ? "[::]" : config.host.includes(":") ? `[${config.host}]` : config.host}:${config.port}`
    const port = yield* Effect.acquireRelease(
      Effect.async<number, XdsServerError>((resume) => {
        server.bindAsync(target, grpc.ServerCredentials.createInsecure(), (error, bound) => {
          if (error !== null)
            resume(
              Effect.fail(
                new XdsServerError({ message: `binding ${target}: ${error.message}`, cause: error, bindFailed: true }),
              ),
            )
          else resume(Effect.succeed(bound))
        })
      }),
      () =>
        Effect.zipRight(
          // Streams end with their status once their peer took what they were sent; a peer
          // that does not read within the grace has its streams reset (see stream-reset.ts),
          // so that the shutdown completes instead of waiting to be forced.
          endOrReset([...calls], shutdownGraceMillis(config.shutdownDuration)),
          // Finalizers are uninterruptible: the force timer lives in the callback, not in a race.
          Effect.async<void>((resume) => {
            const timer = setTimeout(
              () => {
                server.forceShutdown()
                resume(Effect.void)
              },
              Math.min(MAX_TIMER_MS, Duration.toMillis(config.shutdownDuration)),
            )
            server.tryShutdown(() => {
              clearTimeout(timer)
              resume(Effect.void)
            })
          }),
        ),
    )
    yield* Effect.logInfo(`ADS server listening on ${target.replace(/:\d+$/, `:${port}`)}`).pipe(withScope("ads"))

    const shape: XdsServerShape & { readonly grpcService: AdsGrpcServiceShape } = {
      grpcService,
      port,
      update: (next) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          if (!ready) {
            // No stream was admitted yet: the first input becomes the served state at once.
            input = next
            current = makePushContext(input, config.pushContext, `${new Date(now).toISOString()}/0`)
            changedSinceContext = new Set()
            prepared = undefined
            recordPushContextStats(current)
            ready = true
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
        }),
      pushContext: Effect.sync(() => current),
      connections: Effect.sync(() => [...connections.values()].map((c) => c.status())),
      cacheStats: Effect.sync(() => cache.stats()),
      pushStats: Effect.sync(() => ({ pushes, version: current.version, lastPushStartedAt })),
      disconnect: (proxyID) =>
        Effect.gen(function* () {
          let closed = 0
          for (const connection of [...connections.values()]) {
            const status = connection.status()
            if (status.nodeId !== proxyID && status.id !== proxyID) continue
            const call = callOf.get(connection.id)
            if (call !== undefined && !call.writableEnded) call.end()
            closed++
          }
          if (closed > 0)
            yield* Effect.logInfo(`force-disconnected ${closed} stream(s) of ${proxyID}`).pipe(withScope("ads"))
          return closed
        }),
    }
    return shape
  })

/**
 * The ADS server for `mesh-discovery discovery`: follows a stream of PushContext inputs (each
 * element a full snapshot of services, endpoints and config), refusing streams until the first
 * has arrived; every later change is diffed, debounced and pushed.
 */
export const xdsDiscoveryLayer = <E, R>(
  config: XdsServerConfig,
  inputs: Stream.Stream<PushContextInput, E, R>,
  options: AdsServerOptions = {},
): Layer.Layer<XdsServer | AdsGrpcService, XdsServerError, Metrics | R> =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const { grpcService, ...server } = yield* makeXdsServer(config, emptyPushContextInput, {
        awaitFirstInput: true,
        ...options,
      })
      yield* inputs.pipe(
        Stream.runForEach(server.update),
        Effect.catchAllCause((cause) => Effect.logError("PushContext input stream failed", cause)),
        withScope("ads"),
        Effect.forkScoped,
      )
      return Context.make(XdsServer, server).pipe(Context.add(AdsGrpcService, grpcService))
    }),
  )

/** The ADS server as a scoped layer (needs Metrics). */
export const xdsServerLayer = (
  config: XdsServerConfig,
  initial: PushContextInput = emptyPushContextInput,
): Layer.Layer<XdsServer, XdsServerError, Metrics> => Layer.scoped(XdsServer, makeXdsServer(config, initial))
