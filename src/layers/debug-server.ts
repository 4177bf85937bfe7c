/**
 * The discovery server's HTTP surface: `/ready` and the debug interface (`/debug/*`) on
 * --httpAddr, and the monitoring listener (--monitoringAddr: `/metrics`, `/version`, `/ready`
 * and the same debug interface, so `mesh-discovery request GET /debug/syncz` works). The debug
 * interface only answers loopback callers (403 otherwise); `/metrics` too with
 * METRICS_LOCALHOST_ACCESS_ONLY. Publishes `pilot_info` at start. The same pages answer debug
 * requests on the ADS stream (`mesh.io/debug/<path>`, see services/xds/protocol/debug-type.ts),
 * where the caller's identity, not its address, decides. With `--profile`, `/debug/pprof/` serves
 * V8 profiles (layers/profiling/) under the same loopback rule. `/debug/ui` is the mesh page
 * (layers/mesh-ui.ts), refreshed from `/debug/ui/state`; both are HTTP only.
 */

import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Option, Ref, Schedule } from "effect"
import { buildInfo } from "../services/build-info.js"
import { CaConfig } from "../services/ca/config.js"
import { MonitoringConfig } from "../services/config/discovery-config.js"
import { allKinds, apiKindOf } from "../services/config-model/kinds.js"
import { ConfigStore } from "../services/config-store/config-store.js"
import { SYSTEM_NAMESPACE } from "../services/constants.js"
import { clusterz, RemoteClusters } from "../services/debug/clusterz.js"
import { configDump } from "../services/debug/config-dump.js"
import { gatewayApiz } from "../services/debug/gateway-api.js"
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
import type { DebugPage, DebugPageRequest } from "../services/xds/protocol/debug-type.js"
import { XdsServer, type XdsServerShape } from "../services/xds/server.js"
import { CA_DEBUG_MUTATIONS, caDebugPage } from "./ca/debug-pages.js"
import { metricsResponse } from "./http/metrics-endpoint.js"
import { serveRouter } from "./http/serve.js"
import { makeMeshUiHandlers } from "./mesh-ui.js"
import { makePprofHandler } from "./profiling/pprof-routes.js"

export interface DebugServerOptions {
  readonly httpAddr: ListenAddress
  readonly monitoringAddr: ListenAddress
  /** ENABLE_DEBUG_ON_HTTP: the debug interface on --httpAddr. */
  readonly enableDebugOnHttp: boolean
  /** UNSAFE_ENABLE_ADMIN_ENDPOINTS: /debug/force_disconnect. */
  readonly adminEndpoints: boolean
  /** METRICS_LOCALHOST_ACCESS_ONLY */
  readonly metricsLocalhostOnly: boolean
  /** `--profile`: `/debug/pprof/` beside the debug interface, wherever it is served. */
  readonly profiling?: boolean
}

/** A JSON page: pretty-printed, with a final newline (what HTTP and xDS callers both get). */
const jsonPage = (body: unknown): DebugPage => ({ status: 200, body: `${JSON.stringify(body, null, 2)}\n` })
const textPage = (status: number, text: string): DebugPage => ({ status, body: `${text}\n` })
/** No page at this path (or not for this listener). */
const noPage: Effect.Effect<DebugPage | undefined> = Effect.sync(() => undefined)

const fromXds = <A>(f: (xds: XdsServerShape) => Effect.Effect<A>, view: (a: A) => unknown) =>
  Effect.map(Effect.flatMap(XdsServer, f), (a) => jsonPage(view(a)))

/** `proxyID` of a page's query, or the 400 page saying it is required. */
const withProxyId = <R>(query: URLSearchParams, page: (proxyID: string) => Effect.Effect<DebugPage, never, R>) => {
  const proxyID = query.get("proxyID") ?? ""
  return proxyID === "" ? Effect.succeed(textPage(400, "proxyID is required")) : page(proxyID)
}

/**
 * The debug interface, one page per path (`/debug/<path>` without its prefix): the HTTP routes
 * and the ADS stream's debug requests (services/xds/protocol/debug-type.ts) both read it, so the
 * two always say the same. Undefined for a path it does not serve.
 */
export const debugPage =
  (adminEndpoints: boolean) =>
  (request: DebugPageRequest): Effect.Effect<DebugPage | undefined, never, XdsServer | ConfigStore | MeshWatcher> => {
    const { query } = request
    switch (request.path) {
      case "list":
        return Effect.succeed(jsonPage(DEBUG_ENDPOINTS))
      case "version":
        return Effect.succeed(jsonPage(buildInfo))
      case "adsz":
      case "connections":
        return fromXds((x) => x.connections, adsz)
      case "syncz":
        return fromXds((x) => x.connections, syncz)
      case "configz":
        return Effect.map(
          Effect.flatMap(ConfigStore, (s) => s.snapshot),
          (snapshot) => jsonPage(configz(snapshot.kinds.flatMap((kind) => snapshot.list(kind)))),
        )
      case "gateway-api":
        return fromXds((x) => x.pushContext, gatewayApiz)
      case "config_warnings":
        return fromXds((x) => x.pushContext, configWarnings)
      case "registryz":
        return fromXds(
          (x) => x.pushContext,
          (push) => push.services,
        )
      case "endpointShardz":
        return fromXds((x) => x.pushContext, endpointShardz)
      case "clusterz":
        return Effect.flatMap(Effect.serviceOption(RemoteClusters), (remote) =>
          Option.isNone(remote)
            ? Effect.succeed(jsonPage([]))
            : Effect.map(remote.value.clusters, (c) => jsonPage(clusterz(c))),
        )
      case "config_dump":
        return withProxyId(query, (proxyID) =>
          Effect.gen(function* () {
            const xds = yield* XdsServer
            const dump = configDump(yield* xds.pushContext, yield* xds.connections, proxyID)
            return dump === undefined ? textPage(404, `proxy not connected: ${proxyID}`) : jsonPage(dump)
          }),
        )
      case "push_status":
        return fromXds(
          (x) => x.pushStats,
          (stats) => stats,
        )
      case "pushcontext":
        return fromXds((x) => x.pushContext, pushContextSummary)
      case "cachez":
        return fromXds(
          (x) => x.cacheStats,
          (stats) => stats,
        )
      case "mesh":
        return Effect.map(
          Effect.flatMap(MeshWatcher, (m) => m.config),
          jsonPage,
        )
      case "resourcesz":
        return Effect.succeed(
          jsonPage(
            allKinds().map((k) => ({ group: k.group, version: k.version, kind: apiKindOf(k), plural: k.plural })),
          ),
        )
      case "force_disconnect":
        if (!adminEndpoints) return noPage
        return withProxyId(query, (proxyID) =>
          Effect.map(
            Effect.flatMap(XdsServer, (xds) => xds.disconnect(proxyID)),
            (closed) =>
              closed === 0
                ? textPage(404, `proxy not connected: ${proxyID}`)
                : jsonPage({ proxyID, disconnected: closed }),
          ),
        )
      default:
        // The CA's pages (ca_rotation, ca_rotate_key), when this server runs a CA.
        return caDebugPage(request.path)
    }
  }

/** Paths answered for any method; every other page only for GET (and HEAD). */
const ANY_METHOD = new Set(["force_disconnect"])

const notFound = HttpServerResponse.text("404 page not found\n", { status: 404 })

/** The `/debug/*` routes over `debugPage` (ungated; see `localOnly`). */
const debugRoute = (adminEndpoints: boolean) => {
  const pageOf = debugPage(adminEndpoints)
  return Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const url = new URL(request.url, "http://localhost")
    const path = url.pathname.replace(/^\/debug\//, "")
    if (request.method !== "GET" && request.method !== "HEAD" && !ANY_METHOD.has(path)) {
      if (!(request.method === "POST" && CA_DEBUG_MUTATIONS.has(path))) return notFound
    } else if (CA_DEBUG_MUTATIONS.has(path)) {
      return HttpServerResponse.text(`${path} changes the CA: use POST\n`, { status: 405 })
    }
    const page = yield* pageOf({ path, query: url.searchParams })
    if (page === undefined) return notFound
    return HttpServerResponse.text(page.body, {
      status: page.status,
      ...(page.status === 200 ? { contentType: "application/json" } : {}),
    })
  })
}

/** Runs `handler` only for loopback callers; 403 for anyone else. */
const localOnly = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    isLoopback(Option.getOrUndefined(request.remoteAddress))
      ? handler
      : Effect.succeed(HttpServerResponse.text("debug endpoints are only served to localhost\n", { status: 403 })),
  )

const gate = (adminEndpoints: boolean) =>
  HttpRouter.empty.pipe(HttpRouter.all("/debug/*", localOnly(debugRoute(adminEndpoints))))

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
        // And the ADS server admits streams: a proxy sent here once ready is not refused.
        yield* Effect.flatMap(XdsServer, (x) => x.serving)
        yield* Ref.set(ready, true)
      }).pipe(Effect.forkScoped)

      const readyRoute = HttpRouter.get(
        "/ready",
        Effect.map(Ref.get(ready), (ok) =>
          ok ? HttpServerResponse.text("ready\n") : HttpServerResponse.text("not ready\n", { status: 503 }),
        ),
      )
      const pprof = options.profiling === true ? yield* makePprofHandler("mesh-discovery") : undefined
      const ui = yield* makeMeshUiHandlers
      // The mesh page: static paths, so they win over `/debug/*` whatever the order.
      const pages = gate(options.adminEndpoints).pipe(
        HttpRouter.get("/debug/ui", localOnly(ui.page)),
        HttpRouter.get("/debug/ui/state", localOnly(ui.state)),
      )
      const debug =
        pprof === undefined
          ? pages
          : pages.pipe(
              HttpRouter.all("/debug/pprof", localOnly(pprof)),
              HttpRouter.all("/debug/pprof/*", localOnly(pprof)),
            )
      // The same pages for debug requests on the ADS stream (xDS callers are authorized there).
      const xds = yield* XdsServer
      if (xds.serveDebug !== undefined) {
        const context = yield* Effect.context<XdsServer | ConfigStore | MeshWatcher>()
        const pageOf = debugPage(options.adminEndpoints)
        yield* xds.serveDebug({
          pages: (request) => Effect.provide(pageOf(request), context),
          systemNamespace: Option.match(yield* Effect.serviceOption(CaConfig), {
            onNone: () => SYSTEM_NAMESPACE,
            onSome: (ca) => ca.namespace,
          }),
        })
      }
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
      profiling: config.profile,
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
