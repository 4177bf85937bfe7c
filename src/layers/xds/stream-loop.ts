/**
 * One ADS stream, either protocol: its requests handled one at a time by its fiber, its pushes
 * written by the fan-out as plain calls. What differs between state of the world and delta (the
 * pure step functions of services/xds/protocol, how a response is built and recorded) comes in
 * a `StreamProtocol` value (sotw-stream.ts, delta-stream.ts); the gRPC side (admission, the
 * bounded inbox, the writer) in a `StreamChannel` (grpc-service.ts).
 *
 * The stream's state is changed only by plain code that never yields between reading and
 * writing it, so requests and pushes need no lock: each response is written in the same step
 * that records it, and a request's answer is written in the step that changes the state.
 */

import { randomUUID } from "node:crypto"
import { Clock, Effect, Either } from "effect"
import { healthReportOf, isHealthReport } from "../../services/registry/autoregistration/proxy-connections.js"
import type { NonceSource, ProxyInfo } from "../../services/xds/cache/responder.js"
import type { PushContext } from "../../services/xds/model/push-context.js"
import { makeNotFoundLog, withSince } from "../../services/xds/protocol/connection-status.js"
import {
  type DebugStatusCode,
  debugAccess,
  isDebugType,
  pageStatusCode,
  parseDebugRequest,
} from "../../services/xds/protocol/debug-type.js"
import { MAX_ERROR_LENGTH, truncate, typeLabel } from "../../services/xds/protocol/request-limits.js"
import { makeSyncSince } from "../../services/xds/protocol/sync-state.js"
import { PUSH_ORDER, TypeUrl } from "../../services/xds/protocol/type-urls.js"
import type { PushRequest } from "../../services/xds/push/push-request.js"
import type { WatchedHosts } from "../../services/xds/push/watched-hosts.js"
import type { Connection } from "./connections.js"
import type {
  BuiltResponse,
  StreamChannel,
  StreamEnv,
  StreamEvent,
  StreamProtocol,
  StreamRequest,
  StreamStatusCode,
  StreamWatch,
} from "./stream-protocol.js"

/** The fields a debug request is read from, in either protocol. */
interface DebugRequestFields {
  readonly response_nonce?: string
  readonly resource_names?: ReadonlyArray<string>
  readonly resource_names_subscribe?: ReadonlyArray<string>
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

/** Whether a named watch can be affected by the hosts a (merged) push request changed. */
const touches = (
  watchedHosts: WatchedHosts,
  push: PushContext,
  request: PushRequest,
  names: Iterable<string>,
  wildcard: boolean,
): boolean => {
  const hosts = request.changedHosts
  if (wildcard || hosts === undefined) return true
  const watched = watchedHosts.clusterHostsOf(names) ?? watchedHosts.namedHostsOf(push, names)
  if (watched === null) return true
  const [fewer, more] = hosts.size <= watched.size ? [hosts, watched] : [watched, hosts]
  for (const host of fewer) if (more.has(host)) return true
  return false
}

/**
 * Serves one stream until it closes or is refused: its first request names the proxy, which
 * is authorized and registered for pushes; every request is stepped, and answered when its
 * step says so, before the next is taken. The stream is unregistered when the loop ends.
 */
export const serveStream = <
  Req extends StreamRequest,
  Res,
  State,
  Watch extends StreamWatch,
  Event extends StreamEvent,
  Built extends BuiltResponse<Res>,
>(
  protocol: StreamProtocol<Req, Res, State, Watch, Event, Built>,
  env: StreamEnv,
  channel: StreamChannel<Req, Res>,
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const { id } = channel
    const { clock, metrics } = env
    let state = protocol.empty
    let proxy: ProxyInfo | undefined
    let refused = false
    const notFound = makeNotFoundLog()
    /** When each type's sync state began (for `/debug/syncz` and `/debug/ui`). */
    const syncSince = makeSyncSince()
    const markSync = (typeUrl: string) =>
      syncSince.mark(typeUrl, protocol.watches(state).get(typeUrl), clock.unsafeCurrentTimeMillis())
    /** This stream's share of the names the server holds; released when the loop ends. */
    const nameShare = env.names.open()
    /** The names the stream would watch in `next`: one collection per watched type. */
    const watchedNames = (next: State) => Array.from(protocol.watches(next).values(), (w) => protocol.names(w))

    /** Writes a response of `typeUrl`; once written, counts the push and its send time. */
    const writeObserved = (response: Res, typeUrl: string, onWritten: () => void, builtFrom: number) => {
      const startedAt = clock.unsafeCurrentTimeMillis()
      channel.write(response, () => {
        const now = clock.unsafeCurrentTimeMillis()
        metrics.sendTime.observe((now - startedAt) / 1000)
        // Building and sending, per type (the reference's pilot_xds_push_time).
        metrics.pushTime.observe({ type: typeLabel(typeUrl) }, (now - builtFrom) / 1000)
        metrics.pushes.inc({ type: typeLabel(typeUrl) })
        onWritten()
      })
    }

    /**
     * Builds the watch's response and writes it now, unless the protocol finds nothing to send;
     * whether it wrote. A push passes a nonce maker (see `NonceSource`), a request's answer a nonce.
     */
    const respond = (
      typeUrl: string,
      push: PushContext,
      nonce: NonceSource,
      reply: Event | undefined,
      onWritten: () => void,
      changedHosts?: ReadonlySet<string>,
    ): boolean => {
      const watch = protocol.watches(state).get(typeUrl)
      if (watch === undefined) return false
      const builtFrom = clock.unsafeCurrentTimeMillis()
      const built = protocol.build(push, watch, nonce, reply, proxy, env.cache, env.sharable(typeUrl), changedHosts)
      env.built(built.sharedReads)
      for (const text of notFound.record(typeUrl, built.notFound)) env.pushDebug(() => `${text} (connection ${id})`)
      const next = protocol.sent(state, watch, built, push, reply)
      if (next === undefined) return false
      state = next
      markSync(typeUrl)
      // Names that were pending are answered now: the connection may leave the "any" index.
      if (protocol.due(watch)) env.reindex(connection)
      writeObserved(built.response as Res, typeUrl, onWritten, builtFrom)
      env.pushDebug(() => protocol.pushLine(typeUrl, id, built))
      return true
    }

    const connectedAt = yield* Clock.currentTimeMillis
    const connection: Connection = {
      id,
      status: () =>
        withSince(protocol.status(id, channel.peer(), proxy, connectedAt, state, notFound.byType()), syncSince),
      proxyView: () => proxy?.view,
      affectedBy: (push, request) => {
        for (const w of protocol.watches(state).values())
          if (
            (request.full || w.typeUrl === TypeUrl.Endpoint) &&
            (request.onlyTypes === undefined || request.onlyTypes.has(w.typeUrl)) &&
            (touches(env.hosts, push, request, protocol.names(w), w.wildcard) || protocol.due(w))
          )
            return true
        return false
      },
      endpointWatch: () => {
        const w = protocol.watches(state).get(TypeUrl.Endpoint)
        if (w === undefined) return undefined
        // A watch that is answered on the next push whatever it changed is asked on every one.
        return w.wildcard || protocol.due(w) ? "any" : (env.hosts.clusterHostsOf(protocol.names(w)) ?? "any")
      },
      /** Writes every watched type the request can affect, in push order (incremental: EDS only). */
      startPush: (request, done) => {
        const push = env.current()
        let outstanding = 1
        const written = () => {
          if (--outstanding > 0) return
          metrics.convergence.observe(Math.max(0, clock.unsafeCurrentTimeMillis() - request.start) / 1000)
          done()
        }
        for (const typeUrl of PUSH_ORDER) {
          if (!request.full && typeUrl !== TypeUrl.Endpoint) continue
          if (request.onlyTypes !== undefined && !request.onlyTypes.has(typeUrl)) continue
          const watch = protocol.watches(state).get(typeUrl)
          if (watch === undefined || !touches(env.hosts, push, request, protocol.names(watch), watch.wildcard)) continue
          outstanding++
          // An endpoint-only push may send a proxy only the changed hosts' endpoints.
          const partial = !request.full && typeUrl === TypeUrl.Endpoint ? request.changedHosts : undefined
          if (!respond(typeUrl, push, randomUUID, undefined, written, partial)) outstanding--
        }
        written()
      },
      end: channel.end,
    }

    /**
     * Once the proxy is known, a request that only acknowledges (it changes nothing but the
     * acknowledged versions: nothing to answer, nothing to log) is applied where it is read.
     */
    const acceptNow = (request: Req): boolean => {
      if (proxy === undefined || isHealthReport(request.type_url) || isDebugType(request.type_url)) return false
      const next = protocol.step(state, request)
      if (next.event._tag !== "Ack" || next.respond) return false
      // An ACK that would take the stream over its name bounds is refused by the fiber.
      if (nameShare.update(watchedNames(next.state)) !== undefined) return false
      state = next.state
      markSync(request.type_url ?? "")
      env.reindex(connection)
      return true
    }
    const inbox = yield* channel.open(acceptNow)
    /** Whether ProxyConnections was told of this stream (so it is told of its end). */
    let announced = false

    /** Ends the stream with `code`; the status and the log line carry `message` cut short. */
    const refuseWith = (what: string, code: StreamStatusCode, message: string) => {
      // A caller's text may be in it (a debug path, a page's answer to its query): a status
      // detail travels in a trailer, which must stay small for the caller to get it at all.
      const details = truncate(message, MAX_ERROR_LENGTH)
      return Effect.zipRight(
        channel.warn(`${what} refused (${code})`, `${what} refused (${code}) on connection ${id}: ${details}`),
        Effect.suspend(() => {
          refused = true
          return channel.fail(code, details)
        }),
      )
    }

    /** Ends the stream after a debug request that cannot be answered, with the status saying why. */
    const refuseDebug = (code: DebugStatusCode, message: string) => refuseWith("debug request", code, message)

    /**
     * A debug request (debug-type.ts): answered once with its page, apart from the stream's
     * xDS state. A stream that only asks debug pages is never registered, so it is no proxy:
     * not pushed to, not in syncz, not counted. Its ACKs are ignored.
     */
    const answerDebug = (request: Req & DebugRequestFields) =>
      Effect.gen(function* () {
        if ((request.response_nonce ?? "") !== "") return
        const typeUrl = request.type_url ?? ""
        const names = request.resource_names ?? request.resource_names_subscribe ?? []
        const service = env.debug()
        if (service === undefined) return yield* refuseDebug("UNAVAILABLE", "this server serves no debug interface")
        const access = debugAccess(channel.caller, service.systemNamespace, env.plaintextDebugRemote)
        if (Either.isLeft(access)) return yield* refuseDebug(access.left.code, access.left.message)
        const asked = parseDebugRequest(typeUrl, names)
        if (Either.isLeft(asked)) return yield* refuseDebug("INVALID_ARGUMENT", asked.left)
        const path = `/debug/${asked.right.path}`
        const page = yield* service.pages(asked.right)
        if (page === undefined)
          return yield* refuseDebug(
            "NOT_FOUND",
            `unknown debug path ${path} (${typeUrl.split("/")[0]}/debug/list names them)`,
          )
        if (page.status !== 200) return yield* refuseDebug(pageStatusCode(page.status), `${path}: ${page.body.trim()}`)
        const reply = protocol.debugReply(typeUrl, names[0] ?? asked.right.path, Buffer.from(page.body), randomUUID())
        yield* writtenNow((written) => {
          channel.write(reply, written)
          return true
        })
        yield* Effect.logDebug(`debug request ${path} answered on connection ${id}`)
      })

    const handle = (request: Req) =>
      Effect.gen(function* () {
        // One prefix check keeps debug requests off the xDS path below.
        if (isDebugType(request.type_url)) return yield* answerDebug(request as Req & DebugRequestFields)
        if (proxy === undefined) {
          proxy = inbox.proxy()
          if (!(yield* channel.authorize(proxy))) {
            refused = true
            return
          }
          env.register(connection)
          announced = true
          yield* env.proxyConnections.onConnect(id, proxy)
          yield* Effect.logInfo(
            `${protocol.newConnection} ${id} node=${proxy.id} generator=${truncate(proxy.generator, 64)}`,
          )
        }
        const typeUrl = request.type_url ?? ""
        // A health report of the agent: no state, no answer; the WorkloadEntry's condition follows it.
        if (isHealthReport(typeUrl)) return yield* env.proxyConnections.onHealth(id, healthReportOf(request))
        const step = protocol.step(state, request)
        // Names over the stream's or the server's bounds end the stream; it keeps nothing new.
        const over = nameShare.update(watchedNames(step.state))
        if (over !== undefined) return yield* refuseWith("xDS request", over.code, over.message)
        state = step.state
        markSync(typeUrl)
        // Map the watched names to hosts now, not in the next push's fan-out.
        for (const w of protocol.watches(state).values()) env.hosts.clusterHostsOf(protocol.names(w))
        env.reindex(connection)
        // Answered in the same step as the state change: no push can come in between.
        const answered = step.respond
          ? writtenNow((written) => respond(typeUrl, env.current(), randomUUID(), step.event, written))
          : Effect.void
        const event: StreamEvent = step.event
        if (event._tag === "Nack") yield* env.nacks.record(id, proxy, typeUrl, event.error, request.error_detail?.code)
        else if (event._tag === "StaleNonce") metrics.expiredNonce.inc({ type: typeLabel(typeUrl) })
        const line = protocol.requestLine(step.event, typeUrl, id, request)
        if (line !== undefined) yield* Effect.logDebug(line)
        // The next request waits until this answer is written.
        yield* answered
      })

    const unregister = Effect.suspend(() => {
      nameShare.release()
      env.unregister(connection)
      env.nacks.forget(id)
      channel.end()
      return Effect.zipRight(
        announced ? env.proxyConnections.onDisconnect(id) : Effect.void,
        Effect.logDebug(`connection ${id} closed`),
      )
    })

    yield* Effect.gen(function* () {
      for (;;) {
        const request = yield* inbox.next
        if (request === null) return
        yield* handle(request)
        inbox.handled()
        if (refused) return
      }
    }).pipe(Effect.ensuring(unregister))
  })
