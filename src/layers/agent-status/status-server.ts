/**
 * The agent's HTTP status listeners: the readiness port (PROXY_STATUS_PORT, 15021) with
 * `/healthz/ready`, and the agent status port (15020) with `/healthz/ready` and the merged
 * Prometheus page `/stats/prometheus`. `startup_duration_seconds` is set when first ready.
 */
import { HttpRouter, HttpServerResponse } from "@effect/platform"
import { Duration, Effect, Layer, Schedule } from "effect"
import { AgentReadiness } from "../../services/agent-status/status.js"
import { withScope } from "../../services/logging/logging.js"
import { Metrics } from "../../services/metrics/metrics.js"
import type { ListenAddress } from "../../services/net/address.js"
import { metricsResponse } from "../http/metrics-endpoint.js"
import { serveRouter } from "../http/serve.js"

const ready = HttpRouter.get(
  "/healthz/ready",
  Effect.gen(function* () {
    const readiness = yield* (yield* AgentReadiness).check
    return readiness.ready
      ? HttpServerResponse.text("", { status: 200 })
      : HttpServerResponse.text(`not ready: ${readiness.reason ?? "unknown"}\n`, { status: 503 })
  }),
)

const prometheus = HttpRouter.get("/stats/prometheus", metricsResponse)

export const readinessRoutes = HttpRouter.empty.pipe(ready)
export const agentStatusRoutes = HttpRouter.empty.pipe(ready, prometheus)

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

export const statusServersLayer = (addresses: {
  readonly readiness: ListenAddress
  readonly agentStatus: ListenAddress | undefined
}) =>
  Layer.mergeAll(
    serveRouter("readiness", addresses.readiness, readinessRoutes),
    addresses.agentStatus ? serveRouter("agent status", addresses.agentStatus, agentStatusRoutes) : Layer.empty,
  ).pipe(Layer.provide(startupRecording), Layer.annotateLogs("scope", "healthcheck"))
