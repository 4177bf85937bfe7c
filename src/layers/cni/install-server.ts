/**
 * install-cni's HTTP listeners: readiness (`/readyz`, 200 only while the plugin is installed,
 * 503 otherwise; `/healthz`, 200 while the process serves) on the reference's port 8000, and
 * the Prometheus metrics (`/metrics`) on `--monitoring-port`.
 */
import { HttpRouter, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { CniInstallStatus } from "../../services/cni/install-settings.js"
import { metricsResponse } from "../http/metrics-endpoint.js"
import { serveRouter } from "../http/serve.js"

const readiness = HttpRouter.empty.pipe(
  HttpRouter.get(
    "/readyz",
    Effect.flatMap(CniInstallStatus, (status) => status.ready).pipe(
      Effect.flatMap((ready) =>
        ready ? HttpServerResponse.text("ok") : HttpServerResponse.text("not ready", { status: 503 }),
      ),
    ),
  ),
  HttpRouter.get("/healthz", HttpServerResponse.text("ok")),
)

export const layerReadiness = (port: number, source = "the readiness port") =>
  serveRouter("readiness", { host: undefined, port }, readiness, source).pipe(Layer.annotateLogs("scope", "default"))

export const layerMonitoring = (port: number) =>
  serveRouter(
    "monitoring",
    { host: undefined, port },
    HttpRouter.empty.pipe(HttpRouter.get("/metrics", metricsResponse)),
    "--monitoring-port",
  ).pipe(Layer.annotateLogs("scope", "monitoring"))
