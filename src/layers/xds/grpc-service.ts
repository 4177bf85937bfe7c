/**
 * The ADS gRPC service (`envoy.service.discovery.v3.AggregatedDiscoveryService`) on grpc-js:
 * StreamAggregatedResources and DeltaAggregatedResources handlers that admit each stream and
 * hand it to the stream loop (stream-loop.ts) with its protocol. Served by the plaintext
 * listener and the secure one alike, each with its own guard.
 *
 * What a caller sends is bounded before it costs anything: new streams are rate limited
 * (`PILOT_MAX_REQUESTS_PER_SECOND`), the first request must name a valid node (INVALID_ARGUMENT
 * otherwise), requests of unknown types are dropped, a request's resource names and a debug
 * request's type URL are bounded as they are read (name-budget.ts, debug-type.ts), a stream's
 * queued requests are bounded with the call paused while its fiber is busy (inbox.ts), and a
 * write a peer does not take within `PILOT_XDS_SEND_TIMEOUT` resets its stream (writer.ts).
 */

import { availableParallelism } from "node:os"
import * as grpc from "@grpc/grpc-js"
import { Clock, Context, Duration, Effect, Either, type Scope } from "effect"
import type { AuthContext } from "../../services/ca/authenticate.js"
import { formatWindow, makeThrottledLogger } from "../../services/logging/log-throttle.js"
import { throttled, withScope } from "../../services/logging/logging.js"
import { isHealthReport } from "../../services/registry/autoregistration/proxy-connections.js"
import { type ProxyInfo, proxyInfo } from "../../services/xds/cache/responder.js"
import { debugTypeProblem, isDebugType, isLoopbackPeer } from "../../services/xds/protocol/debug-type.js"
import type {
  DeltaDiscoveryRequest,
  DeltaDiscoveryResponse,
  DiscoveryRequest,
  DiscoveryResponse,
} from "../../services/xds/protocol/messages.js"
import { defaultNameLimits, type NameRefusal, requestNamesProblem } from "../../services/xds/protocol/name-budget.js"
import { nodeProblem } from "../../services/xds/protocol/node-id.js"
import { makeTokenBucket, reserve } from "../../services/xds/protocol/rate-limit.js"
import { quoted, typeForLog } from "../../services/xds/protocol/request-limits.js"
import { isKnownType } from "../../services/xds/protocol/type-urls.js"
import type { XdsGrant, XdsGuard, XdsRefusal } from "../../services/xds/protocol/xds-auth.js"
import type { XdsServerConfig } from "../../services/xds/server.js"
import { peerUris } from "../secure-grpc/listener.js"
import { deltaProtocol } from "./delta-stream.js"
import { makeInbox } from "./inbox.js"
import { sotwProtocol } from "./sotw-stream.js"
import { serveStream } from "./stream-loop.js"
import type { ProxyInbox, StreamChannel, StreamEnv, StreamProtocol } from "./stream-protocol.js"
import { endOrReset, resetStream } from "./stream-reset.js"
import { makeWriters, type WritableCall } from "./writer.js"

type Call = grpc.ServerDuplexStream<unknown, unknown>

/** The ADS service for a listener, each stream guarded by `guard`. */
export interface AdsGrpcServiceShape {
  readonly definition: grpc.ServiceDefinition
  /**
   * Handlers whose streams are ended when the calling scope closes. `listener.plaintext` marks
   * the plaintext listener, where debug requests need no identity (debug-type.ts).
   */
  readonly serve: (
    guard: XdsGuard,
    listener?: { readonly plaintext: boolean },
  ) => Effect.Effect<grpc.UntypedServiceImplementation, never, Scope.Scope>
}

export class AdsGrpcService extends Context.Tag("mesh/AdsGrpcService")<AdsGrpcService, AdsGrpcServiceShape>() {}

export interface AdsGrpcServiceDeps {
  readonly config: XdsServerConfig
  readonly definition: grpc.ServiceDefinition
  readonly env: StreamEnv
  /** False until the first input arrived, when the server waits for it: streams are refused. */
  readonly ready: () => boolean
  /** Called once per stream ended by a timed-out write (the metric). */
  readonly onWriteTimeout: () => void
  /** Runs effects from plain code (grpc-js callbacks) on the server's runtime. */
  readonly runFork: (effect: Effect.Effect<void>) => unknown
  /** About how many bytes a response of each protocol serializes to, for the write budget. */
  readonly responseSize: { readonly sotw: (response: object) => number; readonly delta: (response: object) => number }
}

/**
 * Response bytes handed to gRPC and not yet read by the peers, across the server's streams: a
 * few dozen sidecars' full configurations. More buys no speed (the peers read at the rate they
 * can) and costs memory for every answer waiting in HTTP/2 buffers.
 */
export const DEFAULT_WRITE_BUDGET_BYTES = 64 * 1024 * 1024

const defaultRequestRate = (): number => Math.max(100, availableParallelism() * 100)
/** How long a new stream over the rate may wait for its token before RESOURCE_EXHAUSTED. */
const MAX_STREAM_WAIT_MS = 1000
/**
 * At shutdown, how long peers may take to read what they were sent before their streams are
 * reset: a peer that does not read would otherwise keep the server from closing until it is
 * forced, as late as `--shutdownDuration`.
 */
const shutdownGraceMillis = (shutdownDuration: Duration.Duration): number =>
  Math.min(1000, Duration.toMillis(shutdownDuration) / 4)

/**
 * Ends a stream with `status`. Its status waits behind what the stream wrote; a peer that does
 * not read never gets it, so such a stream is reset as well.
 */
const abort = (call: Call, status: Partial<grpc.StatusObject>) => {
  if (!call.writableEnded) call.emit("error", status)
  if (call.writableLength > 0) resetStream(call)
}

export const makeAdsGrpcService = (deps: AdsGrpcServiceDeps): Effect.Effect<AdsGrpcServiceShape, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { config, env, runFork } = deps
    const nameLimits = config.nameLimits ?? defaultNameLimits
    const rate = config.maxRequestsPerSecond > 0 ? config.maxRequestsPerSecond : defaultRequestRate()
    let bucket = makeTokenBucket(rate, yield* Clock.currentTimeMillis)
    /** Admits a new stream, waiting briefly when over the rate; false = refused. */
    const admit = (call: Call) =>
      Effect.gen(function* () {
        if (!deps.ready()) {
          yield* Effect.logInfo(`refusing stream from ${call.getPeer()}: no configuration received yet`).pipe(
            throttled("stream refused before the first configuration"),
          )
          call.emit("error", {
            code: grpc.status.UNAVAILABLE,
            details: "server is not ready to serve discovery information",
          })
          return false
        }
        const step = reserve(bucket, yield* Clock.currentTimeMillis, MAX_STREAM_WAIT_MS)
        bucket = step.bucket
        if (step.refused) {
          yield* Effect.logWarning(`refusing stream from ${call.getPeer()}: over ${rate} new streams per second`).pipe(
            throttled("stream refused by the new-stream rate limit"),
          )
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
      onTimeout: deps.onWriteTimeout,
      warn: (message) => warnStream("closed after a write timeout", message),
      budgetBytes: config.writeBudgetBytes ?? DEFAULT_WRITE_BUDGET_BYTES,
    })

    /**
     * A stream's requests for its fiber, bounded (see inbox.ts). The first request names the
     * proxy: its node is taken as it is read (a later request of the same type may replace it
     * in the queue) and checked at once, as the reference does: a stream whose node cannot be
     * served is refused with INVALID_ARGUMENT. Requests of a type this server does not serve are
     * dropped, never kept, answered or made a label; the first one per stream is logged (cut
     * short), as the reference logs and ignores them.
     */
    const inboxOf = <Req extends DiscoveryRequest | DeltaDiscoveryRequest>(
      call: Call,
      queue: { readonly coalescePerType: boolean; readonly maxPending: number },
      acceptNow: (request: Req) => boolean,
    ): ProxyInbox<Req> => {
      let proxy: ProxyInfo | undefined
      let unknownTypeLogged = false
      const inbox = makeInbox<Req>(call, {
        screen: (request) => {
          if (proxy === undefined) {
            proxy = proxyInfo(request.node)
            const problem = nodeProblem(request.node, proxy.metadata)
            if (problem !== undefined) {
              runFork(warnStream("refused for their node", `refusing xDS stream from ${call.getPeer()}: ${problem}`))
              abort(call, { code: grpc.status.INVALID_ARGUMENT, details: problem })
              return false
            }
          }
          const typeUrl = request.type_url ?? ""
          // Too long a debug type URL or resource name, or more names than a stream may hold:
          // refused at once, before the request is queued or anything is derived from it.
          const debugProblem = isDebugType(typeUrl) ? debugTypeProblem(typeUrl) : undefined
          const refusal: NameRefusal | undefined =
            debugProblem !== undefined
              ? { code: "INVALID_ARGUMENT", message: debugProblem }
              : requestNamesProblem(request, nameLimits)
          if (refusal !== undefined) {
            runFork(
              warnStream(
                `refused for their request (${refusal.code})`,
                `refusing xDS stream from ${call.getPeer()} node=${quoted(proxy.id)}: ${refusal.message}`,
              ),
            )
            abort(call, { code: grpc.status[refusal.code], details: refusal.message })
            return false
          }
          // Health reports go to the stream too: it tells ProxyConnections (WorkloadEntry health).
          // Debug requests too (debug-type.ts): the stream loop answers them once.
          if (isKnownType(typeUrl) || isHealthReport(typeUrl) || isDebugType(typeUrl)) return true
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
        ...(queue.coalescePerType ? { coalesceKey: (request: Req) => request.type_url ?? "" } : {}),
        maxPending: queue.maxPending,
        onOverflow: (pending) => {
          const details = `too many requests queued: ${pending} while earlier ones were unanswered (at most ${queue.maxPending})`
          runFork(warnStream("closed for queueing too much", `closing xDS stream from ${call.getPeer()}: ${details}`))
          abort(call, { code: grpc.status.RESOURCE_EXHAUSTED, details })
        },
      })
      return { ...inbox, proxy: () => proxy as ProxyInfo }
    }

    /** Ends a stream the listener's guard refused, with the refusal's status. */
    const refuse = (call: Call, refusal: XdsRefusal) =>
      Effect.zipRight(
        warnStream("refused by the listener's guard", `refusing xDS stream from ${call.getPeer()}: ${refusal.message}`),
        Effect.sync(() => call.emit("error", { code: refusal.code, details: refusal.message })),
      )

    /** Authenticates a new stream; undefined = refused (and ended). */
    const grantOf = (call: Call, guard: XdsGuard) => {
      const ctx: AuthContext = {
        metadata: (key) => call.metadata.get(key).map((v) => (typeof v === "string" ? v : v.toString("utf8"))),
        verifiedPeerUris: peerUris(call.getAuthContext().sslPeerCertificate),
        remoteAddress: call.getPeer(),
      }
      return guard
        .admit(ctx)
        .pipe(Effect.catchAll((refusal) => Effect.as(refuse(call, refusal), undefined as XdsGrant | undefined)))
    }

    let connectionCounter = 0
    /** The stream loop's view of an admitted call. */
    const channelOf = <Req extends DiscoveryRequest | DeltaDiscoveryRequest, Res>(
      call: Call,
      queue: { readonly coalescePerType: boolean; readonly maxPending: number },
      grant: XdsGrant,
      sizeOf: (response: Res) => number,
      plaintext: boolean,
    ): StreamChannel<Req, Res> => {
      const writer = writerOf<Res>(call as unknown as WritableCall<Res>)
      return {
        id: `${call.getPeer()}-${++connectionCounter}`,
        peer: () => call.getPeer(),
        open: (acceptNow) => Effect.sync(() => inboxOf(call, queue, acceptNow)),
        write: (response, onWritten) => writer.write(response, onWritten, sizeOf(response)),
        // Whether the stream's caller may act as the proxy its first request names; ends it if not.
        authorize: (proxy) =>
          Either.match(grant.authorize(proxy), {
            onLeft: (refusal) => Effect.as(refuse(call, refusal), false),
            onRight: () => Effect.succeed(true),
          }),
        end: () => {
          if (!call.writableEnded) call.end()
        },
        caller: {
          // Without XDS_AUTH the grant names nobody: a verified client certificate still does.
          identities:
            grant.identities.length > 0 ? grant.identities : (peerUris(call.getAuthContext().sslPeerCertificate) ?? []),
          secure: !plaintext,
          loopback: isLoopbackPeer(call.getPeer()),
        },
        fail: (code, message) => Effect.sync(() => abort(call, { code: grpc.status[code], details: message })),
        warn: warnStream,
      }
    }

    /** A stream of `protocol`, from admission to its end. */
    const handle = <Req extends DiscoveryRequest | DeltaDiscoveryRequest, Res>(
      // biome-ignore lint/suspicious/noExplicitAny: the protocol's own state, watch and event types stay its own
      protocol: StreamProtocol<Req, Res, any, any, any, any>,
      call: Call,
      guard: XdsGuard,
      plaintext: boolean,
    ) =>
      Effect.gen(function* () {
        if (!(yield* admit(call))) return
        const grant = yield* grantOf(call, guard)
        if (grant === undefined) return
        const sizeOf = ((protocol as unknown) === deltaProtocol ? deps.responseSize.delta : deps.responseSize.sotw) as (
          response: Res,
        ) => number
        yield* serveStream(protocol, env, channelOf<Req, Res>(call, protocol, grant, sizeOf, plaintext))
      }).pipe(withScope(protocol.logScope))

    const handleDelta = (call: Call, guard: XdsGuard, plaintext: boolean) =>
      config.deltaXds
        ? handle(deltaProtocol, call, guard, plaintext)
        : Effect.sync(() =>
            call.emit("error", {
              code: grpc.status.UNIMPLEMENTED,
              details: "delta xDS is disabled (MESH_DELTA_XDS=false)",
            }),
          )

    /** The service's handlers, every stream guarded by `guard`; `served` collects its streams. */
    const implementation = (guard: XdsGuard, served: Set<Call>, plaintext: boolean) => ({
      StreamAggregatedResources: (call: grpc.ServerDuplexStream<DiscoveryRequest, DiscoveryResponse>) => {
        served.add(call as Call)
        runFork(
          handle(sotwProtocol, call as Call, guard, plaintext).pipe(
            Effect.ensuring(Effect.sync(() => served.delete(call as Call))),
          ),
        )
      },
      DeltaAggregatedResources: (call: grpc.ServerDuplexStream<DeltaDiscoveryRequest, DeltaDiscoveryResponse>) => {
        served.add(call as Call)
        runFork(
          handleDelta(call as Call, guard, plaintext).pipe(
            Effect.ensuring(Effect.sync(() => served.delete(call as Call))),
          ),
        )
      },
    })

    return {
      definition: deps.definition,
      serve: (guard, listener) =>
        Effect.map(
          Effect.acquireRelease(
            Effect.sync(() => new Set<Call>()),
            // The listener shuts down after its services: end their streams first. Streams end
            // with their status once their peer took what they were sent; a peer that does not
            // read within the grace has its streams reset (see stream-reset.ts), so that the
            // listener's shutdown completes instead of waiting to be forced.
            (served) => endOrReset([...served], shutdownGraceMillis(config.shutdownDuration)),
          ),
          (served) => implementation(guard, served, listener?.plaintext === true),
        ),
    }
  })
