/**
 * The ADS server: `envoy.service.discovery.v3.AggregatedDiscoveryService` with
 * StreamAggregatedResources (state of the world) and DeltaAggregatedResources, over
 * @grpc/grpc-js with protos loaded from @grpc/grpc-js-xds. Composed of:
 * - the push fan-out (push-fanout.ts): inputs, the served PushContext, the connections, the
 *   debouncer and the push queue;
 * - the ADS gRPC service (grpc-service.ts): admission and bounds of each stream, handed to the
 *   one stream loop (stream-loop.ts) with its protocol (sotw-stream.ts, delta-stream.ts);
 * - the plaintext listener (`--grpcAddr`), a gRPC listener (layers/grpc/grpc-listener.ts) like
 *   the secure one, serving the same service with the plaintext guard.
 * Resources are encoded once per distinct output and shared by every stream.
 */
import * as grpc from "@grpc/grpc-js"
import { Context, Duration, Effect, ExecutionStrategy, FiberSet, Layer, Scope, Stream } from "effect"
import { withScope } from "../../services/logging/logging.js"
import { Metrics } from "../../services/metrics/metrics.js"
import {
  noProxyConnections,
  type ProxyConnectionsShape,
} from "../../services/registry/autoregistration/proxy-connections.js"
import { makeResourceCache } from "../../services/xds/cache/resource-cache.js"
import { takeGeneratorNotices } from "../../services/xds/cache/responder.js"
import { emptyPushContextInput, type PushContextInput } from "../../services/xds/model/push-context.js"
import type { DebugService } from "../../services/xds/protocol/debug-type.js"
import { defaultNameLimits, makeNameBudget } from "../../services/xds/protocol/name-budget.js"
import { typeLabel } from "../../services/xds/protocol/request-limits.js"
import { TypeUrl } from "../../services/xds/protocol/type-urls.js"
import { openGuard, type XdsGuard } from "../../services/xds/protocol/xds-auth.js"
import { makeWatchedHosts } from "../../services/xds/push/watched-hosts.js"
import { XdsServer, type XdsServerConfig, XdsServerError, type XdsServerShape } from "../../services/xds/server.js"
import { makeGrpcListener } from "../grpc/grpc-listener.js"
import { clearCacheIndexEvery } from "./cache-index.js"
import { AdsGrpcService, type AdsGrpcServiceShape, makeAdsGrpcService } from "./grpc-service.js"
import { makeNackSeries } from "./nack-series.js"
import { loadXdsProtos } from "./protos.js"
import { makePushFanout } from "./push-fanout.js"
import type { StreamEnv } from "./stream-protocol.js"
import { makeXdsMetrics } from "./xds-metrics.js"

export { AdsGrpcService, type AdsGrpcServiceShape }

const MAX_TIMER_MS = 2 ** 31 - 1

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

export interface AdsServerOptions {
  /** Guard of the plaintext `--grpcAddr` listener (`XDS_AUTH_PLAINTEXT`); default: open. */
  readonly plaintextGuard?: XdsGuard
  /**
   * Refuse streams (UNAVAILABLE) until the first input arrives, as the reference does before its
   * caches sync: a proxy served the empty starting state would drop its whole configuration.
   */
  readonly awaitFirstInput?: boolean
  /** Told of every authorized proxy connection and its end (WorkloadEntry auto-registration); default: nobody. */
  readonly proxyConnections?: ProxyConnectionsShape
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
    /** Runs effects from plain code (pushes, grpc-js callbacks) on this server's runtime. */
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
    const fanout = yield* makePushFanout({
      config,
      initial,
      awaitFirstInput: options.awaitFirstInput === true,
      metrics,
      cache,
      encodeAhead: protos.encodeAhead,
      sharable,
      runFork,
    })
    /** The debug interface once it registered (`serveDebug`). */
    let debugService: DebugService | undefined
    const env: StreamEnv = {
      proxyConnections: options.proxyConnections ?? noProxyConnections,
      current: fanout.current,
      register: fanout.register,
      unregister: fanout.unregister,
      reindex: fanout.reindex,
      cache,
      sharable,
      hosts: makeWatchedHosts(),
      built: (sharedReads) => {
        // A shared set stands for cache hits the connection would have read itself.
        if (sharedReads > 0 && config.cache.stats === true) metrics.cacheReads.inc({ type: "hit" }, sharedReads)
        // What the (pure) generators had to skip in the config, logged once each with our logger.
        const notices = takeGeneratorNotices(cache)
        if (notices.length > 0)
          runFork(
            Effect.forEach(
              notices,
              (n) =>
                (n.level === "info" ? Effect.logInfo(n.message) : Effect.logWarning(n.message)).pipe(
                  withScope(n.scope),
                ),
              { discard: true },
            ),
          )
      },
      pushDebug: fanout.pushDebug,
      nacks: makeNackSeries(metrics),
      metrics,
      clock: yield* Effect.clock,
      debug: () => debugService,
      plaintextDebugRemote: config.plaintextDebugRemote === true,
      names: makeNameBudget(config.nameLimits ?? defaultNameLimits),
    }
    const grpcService = yield* makeAdsGrpcService({
      config,
      definition: protos.ads,
      env,
      ready: fanout.ready,
      onWriteTimeout: () => metrics.writeTimeout.inc(),
      runFork,
      responseSize: protos.responseSize,
    })

    // The plaintext listener. Its scope closes after the service's (forked first, closed last),
    // so that its streams are ended before the listener shuts down.
    const listenerScope = yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
    const target = `${config.host === undefined ? "[::]" : config.host.includes(":") ? `[${config.host}]` : config.host}:${config.port}`
    const listener = yield* Scope.extend(
      makeGrpcListener({
        target,
        credentials: grpc.ServerCredentials.createInsecure(),
        options: grpcOptions(config),
        shutdownTimeout: config.shutdownDuration,
        // Marked: the program names the flag that set the address (`--grpcAddr`).
        bindError: (error) =>
          new XdsServerError({ message: `binding ${target}: ${error.message}`, cause: error, bindFailed: true }),
      }),
      listenerScope,
    )
    const implementation = yield* grpcService.serve(options.plaintextGuard ?? openGuard, { plaintext: true })
    yield* Scope.extend(listener.addService(protos.ads, implementation), listenerScope)
    const port = yield* listener.start
    yield* Effect.logInfo(`ADS server listening on ${target.replace(/:\d+$/, `:${port}`)}`).pipe(withScope("ads"))

    const shape: XdsServerShape & { readonly grpcService: AdsGrpcServiceShape } = {
      grpcService,
      port,
      serving: fanout.serving,
      update: fanout.update,
      pushContext: Effect.sync(fanout.current),
      connections: Effect.sync(() => [...fanout.connections()].map((c) => c.status())),
      cacheStats: Effect.sync(() => cache.stats()),
      pushStats: Effect.sync(fanout.stats),
      serveDebug: (service) =>
        Effect.acquireRelease(
          Effect.sync(() => {
            debugService = service
          }),
          () =>
            Effect.sync(() => {
              if (debugService === service) debugService = undefined
            }),
        ),
      disconnect: (proxyID) =>
        Effect.gen(function* () {
          let closed = 0
          for (const connection of [...fanout.connections()]) {
            const status = connection.status()
            if (status.nodeId !== proxyID && status.id !== proxyID) continue
            connection.end()
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
export const layerDiscovery = <E, R>(
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
export const layer = (
  config: XdsServerConfig,
  initial: PushContextInput = emptyPushContextInput,
): Layer.Layer<XdsServer, XdsServerError, Metrics> => Layer.scoped(XdsServer, makeXdsServer(config, initial))
