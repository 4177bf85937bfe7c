/** The self-monitoring HTTP listener: Prometheus `/metrics` and `/version`. */
import { HttpRouter, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { buildInfo } from "../services/build-info.js"
import { Metrics } from "../services/metrics/metrics.js"
import type { ListenAddress } from "../services/net/address.js"
import { serveRouter } from "./http/serve.js"

export const monitoringRoutes = HttpRouter.empty.pipe(
  HttpRouter.get(
    "/metrics",
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const body = yield* Effect.promise(() => metrics.registry.metrics())
      return HttpServerResponse.text(body, { contentType: metrics.registry.contentType })
    }),
  ),
  HttpRouter.get("/version", HttpServerResponse.json(buildInfo)),
)

export const monitoringServerLayer = (address: ListenAddress) =>
  serveRouter("monitoring", address, monitoringRoutes).pipe(Layer.annotateLogs("scope", "monitoring"))
