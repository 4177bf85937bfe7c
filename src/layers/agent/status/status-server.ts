/**
 * The agent's HTTP status listeners: the readiness port (PROXY_STATUS_PORT, 15021) with
 * `/healthz/ready`, and the agent status port (15020) with `/healthz/ready`, the merged
 * Prometheus page `/stats/prometheus`, `/quitquitquit` and `/drain` (POST from the pod only)
 * and the rewritten application probes `/app-health/<container>/<probe>`; plus the `--stsPort`
 * placeholder; with `--profiling`, `/debug/pprof/` (layers/profiling/) to loopback callers.
 * `startup_duration_seconds` is set when first ready.
 */
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Duration, Effect, Layer, Schedule } from "effect"
import type { AppProber } from "../../../services/agent/status/app-probers.js"
import type { AppScrapeTarget } from "../../../services/agent/status/metrics-merge.js"
import { AgentReadiness } from "../../../services/agent/status/status.js"
import { withScope } from "../../../services/logging/logging.js"
import { Metrics } from "../../../services/metrics/metrics.js"
import type { ListenAddress } from "../../../services/net/address.js"
import { checkLocalPost } from "../../../services/net/local-request.js"
import { serveRouter } from "../../http/serve.js"
import { makePprofHandler, withPprofRoutes } from "../../profiling/pprof-routes.js"
import { layer as stsServerLayer } from "../sts/sts-server.js"
import { runAppProbe } from "./app-probe.js"
import { mergedMetricsResponse } from "./merged-metrics.js"

const ready = HttpRouter.get(
  "/healthz/ready",
  Effect.gen(function* () {
    const readiness = yield* (yield* AgentReadiness).check
    return readiness.ready
      ? HttpServerResponse.text("", { status: 200 })
      : HttpServerResponse.text(`not ready: ${readiness.reason ?? "unknown"}\n`, { status: 503 })
  }),
)

export interface StatusServerOptions {
  readonly readiness: ListenAddress
  /** The agent status port; undefined (STATUS_PORT 0) serves only the readiness port. */
  readonly agentStatus: ListenAddress | undefined
  /** Sidecar mode: the proxy's admin port (metrics, drain). Undefined when proxyless. */
  readonly proxyAdminPort?: number | undefined
  /** MESH_PROMETHEUS_ANNOTATIONS, parsed. */
  readonly appMetrics?: AppScrapeTarget | undefined
  /** MESH_ORCH_APP_PROBERS, parsed. */
  readonly appProbers?: ReadonlyMap<string, AppProber>
  /** `--stsPort`; 0 or undefined = off. */
  readonly stsPort?: number
  /** `--profiling`: `/debug/pprof/` on the agent status port. */
  readonly profiling?: boolean
  /**
   * What `/quitquitquit` does once answered. Default: SIGTERM to this process, which takes the
   * agent's normal graceful path (drain, stop the proxy, exit 0). Tests inject their own.
   */
  readonly quit?: Effect.Effect<void>
}

/** SIGTERM to ourselves: NodeRuntime interrupts the main fiber, so every finalizer runs. */
export const quitSelf = Effect.sync(() => process.kill(process.pid, "SIGTERM"))

const adminPost = (port: number, path: string) =>
  Effect.tryPromise({
    try: async () => {
      const response = await fetch(`http://127.0.0.1:${port}${path}`, { method: "POST" })
      await response.text()
      if (response.status !== 200) throw new Error(`HTTP ${response.status}`)
    },
    catch: (e) => (e instanceof Error ? e.message : String(e)),
  })

/** Runs `action` only for a POST from the pod itself (403 otherwise, then 405). */
const localPost = <E, R>(action: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const check = checkLocalPost(
      request.remoteAddress._tag === "Some" ? request.remoteAddress.value : undefined,
      request.method,
    )
    if (!check.ok) {
      yield* Effect.logWarning(`refused ${request.method} ${request.url}: ${check.message.trim()}`)
      return HttpServerResponse.text(check.message, { status: check.status })
    }
    return yield* action
  })

const quitRoute = (quit: Effect.Effect<void>) =>
  HttpRouter.all(
    "/quitquitquit",
    localPost(
      Effect.gen(function* () {
        yield* Effect.logInfo("handling /quitquitquit: the agent exits")
        // After the answer is on its way: the shutdown closes this listener.
        yield* Effect.forkDaemon(Effect.yieldNow().pipe(Effect.zipRight(quit)))
        return HttpServerResponse.text("OK\n")
      }),
    ),
  )

const drainRoute = (proxyAdminPort: number | undefined) =>
  HttpRouter.all(
    "/drain",
    localPost(
      Effect.gen(function* () {
        if (proxyAdminPort === undefined) return HttpServerResponse.text("OK (no proxy to drain)\n")
        yield* Effect.logInfo("handling /drain: draining the proxy's inbound listeners")
        return yield* adminPost(proxyAdminPort, "/drain_listeners?inboundonly&graceful").pipe(
          Effect.as(HttpServerResponse.text("OK\n")),
          Effect.catchAll((error) =>
            Effect.logWarning(`proxy drain request failed: ${error}`).pipe(
              Effect.as(HttpServerResponse.text(`failed to drain: ${error}\n`, { status: 500 })),
            ),
          ),
        )
      }),
    ),
  )

const appHealthRoute = (probers: ReadonlyMap<string, AppProber>, prefix: "/app-health/*" | "/app-lifecycle/*") =>
  HttpRouter.all(
    prefix,
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const path = new URL(request.url, "http://status").pathname
      const prober = probers.get(path)
      if (prober === undefined) {
        return HttpServerResponse.text(`app prober config does not exist for ${path}\n`, { status: 404 })
      }
      const outcome = yield* runAppProbe(prober, request.headers)
      if (outcome.error !== undefined) yield* Effect.logDebug(`probe ${path} failed: ${outcome.error}`)
      return HttpServerResponse.empty({ status: outcome.status })
    }).pipe(withScope("probes")),
  )

export const readinessRoutes = HttpRouter.empty.pipe(ready)

export const agentStatusRoutes = (options: StatusServerOptions) =>
  HttpRouter.empty.pipe(
    ready,
    HttpRouter.get(
      "/stats/prometheus",
      mergedMetricsResponse({ proxyAdminPort: options.proxyAdminPort, app: options.appMetrics }),
    ),
    quitRoute(options.quit ?? quitSelf),
    drainRoute(options.proxyAdminPort),
    appHealthRoute(options.appProbers ?? new Map(), "/app-health/*"),
    // The kubelet calls the application's rewritten postStart/preStop HTTP hooks here.
    appHealthRoute(options.appProbers ?? new Map(), "/app-lifecycle/*"),
  )

/**
 * Wraps the readiness check so that the first ready answer — from a probe or from the
 * background check — records `startup_duration_seconds` (process uptime).
 */
export const startupRecording = Layer.scoped(
  AgentReadiness,
  Effect.gen(function* () {
    const metrics = yield* Metrics
    const inner = yield* AgentReadiness
    const gauge = metrics.gauge("startup_duration_seconds", "The time from the process starting to being marked ready.")
    let recorded = false
    const check = inner.check.pipe(
      Effect.tap((r) =>
        r.ready && !recorded
          ? Effect.sync(() => {
              recorded = true
              gauge.set(process.uptime())
            }).pipe(Effect.zipRight(Effect.logInfo(`ready after ${process.uptime().toFixed(3)}s`)))
          : Effect.void,
      ),
    )
    yield* Effect.forkScoped(
      check.pipe(Effect.repeat({ schedule: Schedule.spaced(Duration.millis(100)), until: (r) => r.ready })),
    )
    return AgentReadiness.of({ check })
  }).pipe(withScope("healthcheck")),
)

/** The agent status port, with `/debug/pprof/` when profiling. */
const agentStatusLayer = (options: StatusServerOptions, address: ListenAddress) =>
  options.profiling === true
    ? Layer.unwrapEffect(
        Effect.map(makePprofHandler("mesh-agent"), (pprof) =>
          serveRouter("agent status", address, withPprofRoutes(pprof)(agentStatusRoutes(options)), "STATUS_PORT"),
        ),
      )
    : serveRouter("agent status", address, agentStatusRoutes(options), "STATUS_PORT")

export const layer = (options: StatusServerOptions) =>
  Layer.mergeAll(
    serveRouter("readiness", options.readiness, readinessRoutes, "PROXY_STATUS_PORT"),
    options.agentStatus ? agentStatusLayer(options, options.agentStatus) : Layer.empty,
    options.stsPort ? stsServerLayer(options.stsPort) : Layer.empty,
  ).pipe(Layer.provide(startupRecording), Layer.annotateLogs("scope", "healthcheck"))
