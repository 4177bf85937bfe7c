/**
 * The discovery server's HTTP surface: `/ready` and the debug interface (`/debug/*`) on
 * --httpAddr, and the monitoring listener (--monitoringAddr: `/metrics`, `/version`, `/ready`
 * and the same debug interface, so `mesh-discovery request GET /debug/syncz` works). The debug
 * interface only answers loopback callers (403 otherwise); `/metrics` too with
 * METRICS_LOCALHOST_ACCESS_ONLY. Publishes `pilot_info` at start.
 */

import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Option, Ref, Schedule } from "effect"
import { buildInfo } from "../services/build-info.js"
import { MonitoringConfig } from "../services/config/discovery-config.js"
import { allKinds, apiKindOf } from "../services/config-model/kinds.js"
import { ConfigStore } from "../services/config-store/config-store.js"
import { clusterz, RemoteClusters } from "../services/debug/clusterz.js"
import { configDump } from "../services/debug/config-dump.js"
import {
  adsz,
  configWarnings,
  configz,
  DEBUG_ENDPOINTS,
  endpointShardz,
  isLoopback,
  pushContextSummary,
  syncz,
} from "../services/debug/views.js"
import { MeshWatcher } from "../services/mesh-config/watcher.js"
import { Metrics } from "../services/metrics/metrics.js"
import type { ListenAddress } from "../services/net/address.js"
import { ServiceRegistry } from "../services/registry/registry.js"
import { XdsServer } from "../services/xds/server.js"
import { metricsResponse } from "./http/metrics-endpoint.js"
import { serveRouter } from "./http/serve.js"

export interface DebugServerOptions {
  readonly httpAddr: ListenAddress
  readonly monitoringAddr: ListenAddress
  /** ENABLE_DEBUG_ON_HTTP: the debug interface on --httpAddr. */
  readonly enableDebugOnHttp: boolean
  /** UNSAFE_ENABLE_ADMIN_ENDPOINTS: /debug/force_disconnect. */
  readonly adminEndpoints: boolean
  /** METRICS_LOCALHOST_ACCESS_ONLY */
  readonly metricsLocalhostOnly: boolean
}

const json = (body: unknown, status = 200) =>
  HttpServerResponse.text(`${JSON.stringify(body, null, 2)}\n`, { status, contentType: "application/json" })

/** Runs `handler` only for loopback callers; 403 for anyone else. */
const localOnly = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    isLoopback(Option.getOrUndefined(request.remoteAddress))
      ? handler
      : Effect.succeed(HttpServerResponse.text("debug endpoints are only served to localhost\n", { status: 403 })),
  )

const notFound = HttpServerResponse.text("404 page not found\n", { status: 404 })

/** The `/debug/*` routes (ungated; see `localOnly`). */
const debugRoutes = (adminEndpoints: boolean) =>
  HttpRouter.empty.pipe(
    HttpRouter.get("/debug/list", Effect.succeed(json(DEBUG_ENDPOINTS))),
    HttpRouter.get(
      "/debug/adsz",
      Effect.map(
        Effect.flatMap(XdsServer, (x) => x.connections),
        (c) => json(adsz(c)),
      ),
    ),
    HttpRouter.get(
      "/debug/connections",
      Effect.map(
        Effect.flatMap(XdsServer, (x) => x.connections),
        (c) => json(adsz(c)),
      ),
    ),
    HttpRouter.get(
      "/debug/syncz",
      Effect.map(
        Effect.flatMap(XdsServer, (x) => x.connections),
        (c) => json(syncz(c)),
      ),
    ),
    HttpRouter.get(
      "/debug/configz",
      Effect.gen(function* () {
        const snapshot = yield* Effect.flatMap(ConfigStore, (s) => s.snapshot)
        return json(configz(snapshot.kinds.flatMap((kind) => snapshot.list(kind))))
      }),
    ),
    HttpRouter.get(
      "/debug/config_warnings",
      Effect.map(
        Effect.flatMap(XdsServer, (x) => x.pushContext),
        (push) => json(configWarnings(push)),
      ),
    ),
    HttpRouter.get(
      "/debug/registryz",
      Effect.map(
        Effect.flatMap(XdsServer, (x) => x.pushContext),
        (push) => json(push.services),
      ),
    ),
    HttpRouter.get(
      "/debug/endpointShardz",
      Effect.map(
        Effect.flatMap(XdsServer, (x) => x.pushContext),
        (push) => json(endpointShardz(push)),
      ),
    ),
    HttpRouter.get(
      "/debug/clusterz",
      Effect.flatMap(Effect.serviceOption(RemoteClusters), (remote) =>
        Option.isNone(remote) ? Effect.succeed(json([])) : Effect.map(remote.value.clusters, (c) => json(clusterz(c))),
      ),
    ),
    HttpRouter.get(
      "/debug/config_dump",
      Effect.gen(function* () {
        const xds = yield* XdsServer
        const query = yield* HttpServerRequest.ParsedSearchParams
        const proxyID = query.proxyID
        if (typeof proxyID !== "string" || proxyID === "")
          return HttpServerResponse.text("proxyID is required\n", { status: 400 })
        const dump = configDump(yield* xds.pushContext, yield* xds.connections, proxyID)
        return dump === undefined
          ? HttpServerResponse.text(`proxy not connected: ${proxyID}\n`, { status: 404 })
          : json(dump)
      }),
    ),
    HttpRouter.get(
      "/debug/push_status",
      Effect.map(
        Effect.flatMap(XdsServer, (x) => x.pushStats),
        json,
      ),
    ),
    HttpRouter.get(
      "/debug/pushcontext",
      Effect.map(
        Effect.flatMap(XdsServer, (x) => x.pushContext),
        (push) => json(pushContextSummary(push)),
      ),
    ),
    HttpRouter.get(
      "/debug/cachez",
      Effect.map(
        Effect.flatMap(XdsServer, (x) => x.cacheStats),
        json,
      ),
    ),
    HttpRouter.get(
      "/debug/mesh",
      Effect.map(
        Effect.flatMap(MeshWatcher, (m) => m.config),
        json,
      ),
    ),
    HttpRouter.get(
      "/debug/resourcesz",
      Effect.succeed(
        json(allKinds().map((k) => ({ group: k.group, version: k.version, kind: apiKindOf(k), plural: k.plural }))),
      ),
    ),
    HttpRouter.all(
      "/debug/force_disconnect",
      adminEndpoints
        ? Effect.gen(function* () {
            const xds = yield* XdsServer
            const query = yield* HttpServerRequest.ParsedSearchParams
            const proxyID = query.proxyID
            if (typeof proxyID !== "string" || proxyID === "")
              return HttpServerResponse.text("proxyID is required\n", { status: 400 })
            const closed = yield* xds.disconnect(proxyID)
            return closed === 0
              ? HttpServerResponse.text(`proxy not connected: ${proxyID}\n`, { status: 404 })
              : json({ proxyID, disconnected: closed })
          })
        : Effect.succeed(notFound),
    ),
  )

const gate = <E, R>(router: HttpRouter.HttpRouter<E, R>) =>
  HttpRouter.empty.pipe(HttpRouter.all("/debug/*", localOnly(router)))

export const layerWith = (options: DebugServerOptions) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const metrics = yield* Metrics
      metrics
        .gauge("pilot_info", "Pilot version and build information.", ["version"])
        .set({ version: buildInfo.version }, 1)

      const ready = yield* Ref.make(false)
      yield* Effect.gen(function* () {
        yield* Effect.flatMap(ConfigStore, (s) => s.awaitSynced)
        yield* Effect.flatMap(ServiceRegistry, (r) => r.awaitSynced)
        yield* XdsServer
        yield* Ref.set(ready, true)
      }).pipe(Effect.forkScoped)

      const readyRoute = HttpRouter.get(
        "/ready",
        Effect.map(Ref.get(ready), (ok) =>
          ok ? HttpServerResponse.text("ready\n") : HttpServerResponse.text("not ready\n", { status: 503 }),
        ),
      )
      const debug = gate(debugRoutes(options.adminEndpoints))
      const monitoring = HttpRouter.empty.pipe(
        HttpRouter.get("/metrics", options.metricsLocalhostOnly ? localOnly(metricsResponse) : metricsResponse),
        HttpRouter.get("/version", HttpServerResponse.json(buildInfo)),
        readyRoute,
        HttpRouter.concat(debug),
      )
      const http = HttpRouter.empty.pipe(
        readyRoute,
        options.enableDebugOnHttp ? HttpRouter.concat(debug) : (router) => router,
      )
      return Layer.mergeAll(
        serveRouter("monitoring", options.monitoringAddr, monitoring, "--monitoringAddr").pipe(
          Layer.annotateLogs("scope", "monitoring"),
        ),
        serveRouter("http", options.httpAddr, http, "--httpAddr"),
      )
    }),
  )

/** The debug and monitoring listeners from `MonitoringConfig`. */
export const layer = Layer.unwrapEffect(
  Effect.map(MonitoringConfig, (config) =>
    layerWith({
      httpAddr: config.httpAddr,
      monitoringAddr: config.monitoringAddr,
      enableDebugOnHttp: config.ENABLE_DEBUG_ON_HTTP,
      adminEndpoints: config.UNSAFE_ENABLE_ADMIN_ENDPOINTS,
      metricsLocalhostOnly: config.METRICS_LOCALHOST_ACCESS_ONLY,
    }),
  ),
)

/** `meshd_uptime_seconds`, refreshed every few seconds. */
export const layerUptime = Layer.scopedDiscard(
  Effect.gen(function* () {
    const metrics = yield* Metrics
    const uptime = metrics.gauge("meshd_uptime_seconds", "Current mesh server uptime in seconds")
    yield* Effect.sync(() => uptime.set(process.uptime())).pipe(
      Effect.repeat(Schedule.spaced("5 seconds")),
      Effect.forkScoped,
    )
  }),
)
