/**
 * The xDS proxy: a gRPC server on the local unix socket (`./etc/mesh/proxy/XDS`) serving both ADS
 * methods; each downstream stream is paired with one upstream stream to the discovery server.
 * Messages pass as bytes in both directions (ACKs and NACKs unchanged). A broken upstream is
 * reopened (at once after a stream that answered, with backoff otherwise: `superviseUpstream`)
 * and the downstream's subscriptions replayed; the downstream stays open. For delta streams the
 * responses are also decoded, to replay the versions the downstream ACKed as
 * `initial_resource_versions`.
 * A refusal (PERMISSION_DENIED, UNAUTHENTICATED, INVALID_ARGUMENT) is not bridged: the downstream
 * stream ends with the same status, so the application sees why (`isRefusal`). Repeated causes
 * are logged once per cause, not once per retry (`causeToLog`).
 *
 * With a DNS proxy (`nameTableSink`) the agent also subscribes to NDS on each upstream stream
 * after the downstream's first request and consumes those responses itself; with a Wasm fetcher
 * ECDS remote modules are fetched and rewritten (upstream-responses.ts). Both may take time (a
 * fetch), so responses go down through one queue per stream, in the order they came up.
 */
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect, Either, Fiber, FiberSet, Layer, Queue, Ref, Runtime } from "effect"
import type { NameTableSinkShape } from "../../../services/agent/dns/name-table-sink.js"
import { retrySchedule } from "../../../services/agent/identity/identity.js"
import type { WasmFetcherShape } from "../../../services/agent/wasm/contract.js"
import {
  deltaNameTableRequest,
  type NameTableSubscription,
  notSubscribed,
  sotwNameTableRequest,
} from "../../../services/agent/xds-proxy/name-table-subscription.js"
import { superviseUpstream } from "../../../services/agent/xds-proxy/reconnect.js"
import { causeKey, causeToLog, isRefusal, type LoggedCause } from "../../../services/agent/xds-proxy/refusal.js"
import {
  type DeltaRequest,
  type DeltaResponse,
  deltaReplay,
  emptyDeltaVersions,
  emptyReplay,
  type ReplayState,
  recordDelta,
  recordDeltaAnswer,
  recordDeltaResponse,
  recordSotw,
  type SotwRequest,
  sotwReplay,
  XdsProxy,
} from "../../../services/agent/xds-proxy/xds-proxy.js"
import { withScope } from "../../../services/logging/logging.js"
import { Metrics } from "../../../services/metrics/metrics.js"
import { bindUnixSocket } from "../../grpc/unix-socket.js"
import { loadXdsProtos } from "../../xds/protos.js"
import { makeResponseHandler } from "./upstream-responses.js"

export interface XdsProxySettings {
  readonly socketPath: string
  /** Discovery server `host:port`. */
  readonly upstream: string
  /** TLS toward the discovery server; undefined = plaintext (e.g. port 15010). */
  readonly tls?: { readonly rootCaPem: string; readonly serverName: string }
  /** Bearer token for the upstream (read per stream); undefined when the file cannot be read. */
  readonly token?: Effect.Effect<string | undefined>
  /**
   * The trust bundle the agent holds, trusted for the upstream beside `tls.rootCaPem`, so a
   * discovery server serving under a new root key (issue 43) is still trusted.
   */
  readonly meshRoots?: Effect.Effect<string>
  /** Client certificate for upstream mutual TLS (the workload's), when held. */
  readonly clientCert?: Effect.Effect<{ readonly certPem: string; readonly keyPem: string } | undefined>
  readonly retry?: { readonly base: Duration.Duration; readonly max: Duration.Duration }
  /**
   * HTTP/2 pings on the upstream connection (default 30 s, answered within 10 s: the spec's gRPC
   * keepalive): a discovery server whose host vanished sends no reset, and without pings the
   * upstream stream would wait on a dead connection forever instead of reconnecting.
   */
  readonly keepalive?: { readonly interval: Duration.Duration; readonly timeout: Duration.Duration }
  /** The DNS proxy's name table: when given, NDS is subscribed to upstream and consumed by the agent. */
  readonly nameTableSink?: NameTableSinkShape
  /** When given, ECDS remote Wasm modules are fetched and rewritten to local files. */
  readonly wasmFetcher?: WasmFetcherShape
}

const SERVICE = "envoy.service.discovery.v3.AggregatedDiscoveryService"
const METHODS = { sotw: "StreamAggregatedResources", delta: "DeltaAggregatedResources" } as const
type Mode = keyof typeof METHODS

const identity = (b: Buffer) => b

const rawDefinition = (): grpc.ServiceDefinition =>
  Object.fromEntries(
    Object.values(METHODS).map((name) => [
      name,
      {
        path: `/${SERVICE}/${name}`,
        requestStream: true,
        responseStream: true,
        requestSerialize: identity,
        requestDeserialize: identity,
        responseSerialize: identity,
        responseDeserialize: identity,
        originalName: name,
      },
    ]),
  ) as unknown as grpc.ServiceDefinition

type Codec = {
  decode: (b: Buffer) => Record<string, unknown>
  encode: (m: object) => Buffer
  decodeResponse: (b: Buffer) => Record<string, unknown>
}

const codecFor = (mode: Mode): Codec => {
  const method = (loadXdsProtos().ads as unknown as Record<string, grpc.MethodDefinition<object, object>>)[
    METHODS[mode]
  ]!
  return {
    decode: (b) => method.requestDeserialize(b) as Record<string, unknown>,
    encode: (m) => method.requestSerialize(m),
    decodeResponse: (b) => method.responseDeserialize(b) as Record<string, unknown>,
  }
}

export const makeXdsProxy = (settings: XdsProxySettings) =>
  Effect.gen(function* () {
    const metricsService = yield* Metrics
    const requests = metricsService.counter("xds_proxy_requests", "The total number of Xds Proxy Requests")
    const responses = metricsService.counter("xds_proxy_responses", "The total number of Xds Proxy Responses")
    const failures = metricsService.counter(
      "meshd_connection_failures",
      "The total number of connection failures to meshd",
    )
    const terminations = metricsService.counter(
      "meshd_connection_terminations",
      "The total number of connection errors to meshd",
    )
    const received = yield* Ref.make(false)
    // proxy-wide: a refused application reconnects on a new downstream stream, which must not
    // log the same refusal again
    const lastCause = yield* Ref.make<LoggedCause>(undefined)
    /** Warns about `message` when its cause is new; at debug level otherwise. */
    const warnOnce = (key: string, message: string) =>
      Ref.modify(lastCause, (last) => causeToLog(last, key)).pipe(
        Effect.flatMap((log) => (log ? Effect.logWarning(message) : Effect.logDebug(`${message} (again)`))),
      )
    const active = yield* Ref.make(0)
    const runtime = yield* Effect.runtime<never>()
    const fibers = yield* FiberSet.make()
    const retry = settings.retry ?? { base: Duration.millis(100), max: Duration.seconds(5) }
    const codecs = { sotw: codecFor("sotw"), delta: codecFor("delta") }
    const handling = {
      ...(settings.nameTableSink ? { nameTableSink: settings.nameTableSink } : {}),
      ...(settings.wasmFetcher ? { wasmFetcher: settings.wasmFetcher } : {}),
    }
    const handlers = {
      sotw: makeResponseHandler("sotw", codecs.sotw.decodeResponse, handling, metricsService),
      delta: makeResponseHandler("delta", codecs.delta.decodeResponse, handling, metricsService),
    }
    const nameTableRequest = (mode: Mode, subscription: NameTableSubscription) =>
      mode === "sotw" ? sotwNameTableRequest(subscription) : deltaNameTableRequest(subscription)

    const channelCredentials = Effect.gen(function* () {
      if (settings.tls === undefined) return grpc.credentials.createInsecure()
      const cert = settings.clientCert ? yield* settings.clientCert : undefined
      const meshRoots = settings.meshRoots ? yield* settings.meshRoots : ""
      return grpc.credentials.createSsl(
        Buffer.from(`${settings.tls.rootCaPem}\n${meshRoots}`),
        cert ? Buffer.from(cert.keyPem) : null,
        cert ? Buffer.from(cert.certPem) : null,
      )
    })
    const keepalive = settings.keepalive ?? { interval: Duration.seconds(30), timeout: Duration.seconds(10) }
    const clientOptions: grpc.ClientOptions = {
      "grpc.keepalive_time_ms": Duration.toMillis(keepalive.interval),
      "grpc.keepalive_timeout_ms": Duration.toMillis(keepalive.timeout),
      ...(settings.tls
        ? {
            "grpc.ssl_target_name_override": settings.tls.serverName,
            "grpc.default_authority": settings.tls.serverName,
          }
        : {}),
    }

    /** Serves one downstream stream until it ends. */
    const serve = (mode: Mode, downstream: grpc.ServerDuplexStream<Buffer, Buffer>) =>
      Effect.gen(function* () {
        const codec = codecs[mode]
        const handleResponse = handlers[mode]
        /** Upstream responses on their way down, in arrival order, with the stream each came on. */
        const arrivals = yield* Queue.unbounded<{
          readonly bytes: Buffer
          readonly stream: grpc.ClientDuplexStream<Buffer, Buffer>
        }>()
        /** The agent's own NDS subscription on this stream's upstreams. */
        let nameTable = notSubscribed
        let replay: ReplayState<SotwRequest | DeltaRequest> = emptyReplay()
        // delta only: the resource versions the downstream has ACKed, for a reconnect
        let versions = emptyDeltaVersions
        let upstream: grpc.ClientDuplexStream<Buffer, Buffer> | undefined
        /** Upstream streams opened for this downstream so far. */
        let streams = 0
        let downstreamDone = false
        let wakeDownstreamDone: (() => void) | undefined
        const downstreamEnded = new Promise<void>((resolve) => {
          wakeDownstreamDone = resolve
        })
        const finish = () => {
          downstreamDone = true
          wakeDownstreamDone?.()
        }
        downstream.on("data", (bytes: Buffer) => {
          requests.inc()
          try {
            const message = codec.decode(bytes)
            if (mode === "sotw") replay = recordSotw(replay as ReplayState<SotwRequest>, message as SotwRequest)
            else {
              replay = recordDelta(replay as ReplayState<DeltaRequest>, message as DeltaRequest)
              versions = recordDeltaAnswer(versions, message as DeltaRequest)
            }
          } catch {
            // undecodable: forwarded as is, the server answers it
          }
          upstream?.write(bytes)
          // the node has gone up with the first request: the server can now tell whether this
          // proxy captures DNS; later upstream streams ask again in their replay
          if (settings.nameTableSink !== undefined && !nameTable.subscribed) {
            nameTable = { ...nameTable, subscribed: true }
            upstream?.write(codec.encode(nameTableRequest(mode, nameTable)))
          }
        })
        downstream.on("end", finish)
        downstream.on("error", finish)
        downstream.on("cancelled", finish)
        downstream.on("close", finish)

        /** One upstream stream: resolves when it ends; `gotResponse` says whether it ever answered. */
        const connectOnce = Effect.gen(function* () {
          const creds = yield* channelCredentials
          const token = settings.token ? yield* settings.token : undefined
          streams += 1
          return yield* Effect.async<{ gotResponse: boolean; error?: grpc.ServiceError }>((resume) => {
            const replayed =
              mode === "sotw"
                ? sotwReplay(replay as ReplayState<SotwRequest>)
                : deltaReplay(replay as ReplayState<DeltaRequest>, versions)
            const client = new grpc.Client(settings.upstream, creds, clientOptions)
            const metadata = new grpc.Metadata()
            if (token !== undefined) metadata.set("authorization", `Bearer ${token}`)
            const stream = client.makeBidiStreamRequest(`/${SERVICE}/${METHODS[mode]}`, identity, identity, metadata)
            let gotResponse = false
            let settled = false
            const settle = (error?: grpc.ServiceError) => {
              if (settled) return
              settled = true
              if (upstream === stream) upstream = undefined
              client.close()
              resume(Effect.succeed({ gotResponse, ...(error ? { error } : {}) }))
            }
            stream.on("data", (bytes: Buffer) => {
              if (!gotResponse && streams > 1) {
                Runtime.runSync(runtime)(
                  Effect.logInfo(
                    `upstream ${settings.upstream} reconnected (stream ${streams}, ${replayed.length} subscriptions replayed)`,
                  ).pipe(withScope("xdsproxy")),
                )
              }
              if (!gotResponse) Runtime.runSync(runtime)(Ref.set(lastCause, undefined))
              gotResponse = true
              responses.inc()
              Runtime.runSync(runtime)(Ref.set(received, true))
              Queue.unsafeOffer(arrivals, { bytes, stream })
            })
            stream.on("error", (e: grpc.ServiceError) => settle(e))
            stream.on("end", () => settle())
            upstream = stream
            for (const message of replayed) stream.write(codec.encode(message))
            if (nameTable.subscribed && replayed.length > 0)
              stream.write(codec.encode(nameTableRequest(mode, nameTable)))
            return Effect.sync(() => {
              stream.cancel()
              settle()
            })
          })
        })

        const attempt = Effect.gen(function* () {
          const result = yield* connectOnce
          if (downstreamDone) return "downstream-ended" as const
          const error = result.error
          const key = causeKey(error?.code, error?.details)
          if (error !== undefined && isRefusal(error.code)) {
            if (result.gotResponse) terminations.inc()
            else failures.inc()
            yield* warnOnce(
              key,
              `upstream ${settings.upstream} refused the ${mode === "sotw" ? "ADS" : "delta ADS"} stream: ${key}; passed to the downstream`,
            )
            finish()
            // the status ends the downstream call as is: the application decides what to do
            downstream.emit("error", { code: error.code, details: error.details, metadata: error.metadata })
            return "downstream-ended" as const
          }
          if (result.gotResponse) {
            terminations.inc()
            yield* warnOnce(
              key,
              `upstream ${settings.upstream} terminated: ${error?.details ?? "stream ended"}; reconnecting`,
            )
            return "answered" as const
          }
          failures.inc()
          yield* warnOnce(key, `upstream ${settings.upstream} connection failed: ${error?.details ?? "stream ended"}`)
          return "failed" as const
        })
        /** Passes the arrivals down one at a time: a slow one (a Wasm fetch) holds back the rest. */
        const deliver = Effect.gen(function* () {
          for (;;) {
            const { bytes, stream } = yield* Queue.take(arrivals)
            const handled = yield* handleResponse(bytes, nameTable)
            if (handled._tag === "NameTable") {
              nameTable = handled.subscription
              // the ACK belongs to the stream that delivered the response; a closed one needs none
              if (upstream === stream) stream.write(codec.encode(handled.reply))
              continue
            }
            if (mode === "delta") {
              // undecodable: passed on all the same, the downstream NACKs it
              const decoded = Either.try(() => handled.decoded ?? codec.decodeResponse(handled.bytes))
              if (Either.isRight(decoded)) versions = recordDeltaResponse(versions, decoded.right as DeltaResponse)
            }
            if (!downstreamDone) downstream.write(handled.bytes)
          }
        })
        const delivery = yield* Effect.fork(deliver)
        const loop = superviseUpstream(attempt, retrySchedule(retry))
        yield* Ref.update(active, (n) => n + 1)
        yield* Effect.raceFirst(
          loop,
          Effect.promise(() => downstreamEnded),
        ).pipe(
          Effect.ensuring(
            Effect.sync(() => {
              upstream?.cancel()
              upstream = undefined
              if (!downstreamDone) downstream.end()
            }),
          ),
          Effect.ensuring(Fiber.interrupt(delivery)),
          Effect.ensuring(Ref.update(active, (n) => n - 1)),
        )
      }).pipe(withScope("xdsproxy"))

    const run = Runtime.runFork(runtime)
    const handler = (mode: Mode) => (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
      run(FiberSet.run(fibers, serve(mode, call)))
    }

    const server = new grpc.Server()
    server.addService(rawDefinition(), {
      [METHODS.sotw]: handler("sotw"),
      [METHODS.delta]: handler("delta"),
    })
    yield* bindUnixSocket(server, {
      socketPath: settings.socketPath,
      source: "the xDS proxy socket",
      replaceStale: true,
    }).pipe(Effect.orDie)
    yield* Effect.logInfo(`xDS proxy listening on ${settings.socketPath}, upstream ${settings.upstream}`).pipe(
      withScope("xdsproxy"),
    )
    return XdsProxy.of({
      socketPath: settings.socketPath,
      receivedResponse: Ref.get(received),
      activeStreams: Ref.get(active),
    })
  })

export const layer = (settings: XdsProxySettings) => Layer.scoped(XdsProxy, makeXdsProxy(settings))
