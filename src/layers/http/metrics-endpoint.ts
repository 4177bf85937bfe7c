/** The Prometheus text of the process's Metrics registry, as an HTTP response (every binary's metrics page). */
import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { Metrics } from "../../services/metrics/metrics.js"

export const metricsResponse = Effect.gen(function* () {
  const metrics = yield* Metrics
  const body = yield* Effect.promise(() => metrics.registry.metrics())
  return HttpServerResponse.text(body, { contentType: metrics.registry.contentType })
})
