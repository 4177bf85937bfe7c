/**
 * The agent status listeners over real HTTP: merged metrics from the agent registry, a stand-in
 * proxy admin and an application (OpenMetrics and text; failing and hanging sources skipped and
 * counted), /quitquitquit and /drain (POST from loopback only), rewritten application probes
 * against a tiny HTTP app, a TCP port and a grpc-js health server, and the --stsPort placeholder.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import { networkInterfaces } from "node:os"
import * as grpc from "@grpc/grpc-js"
import { Effect, Either, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { healthServiceDefinition } from "../../../../src/layers/agent/status/grpc-health.js"
import { layer as statusServersLayer } from "../../../../src/layers/agent/status/status-server.js"
import { layer as metricsLayer } from "../../../../src/layers/metrics.js"
import { parseAppProbers } from "../../../../src/services/agent/status/app-probers.js"
import { AgentReadiness } from "../../../../src/services/agent/status/status.js"
import { freePort } from "../../../support/ports.js"

const OM = "application/openmetrics-text; version=1.0.0; charset=utf-8"

const listen = (server: Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)),
  )

/** A non-loopback address of this machine, if it has one (requests from it are not local). */
const externalIPv4 = Object.values(networkInterfaces())
  .flat()
  .find((i) => i !== undefined && i.family === "IPv4" && !i.internal)?.address

// --- the stand-in proxy admin -------------------------------------------------------------
const proxyEvents: Array<string> = []
let proxyDrainStatus = 200
let proxyMetricsFail = false
const proxyAdmin = createServer((req, res) => {
  if (req.method === "POST" && req.url === "/drain_listeners?inboundonly&graceful") {
    proxyEvents.push("drain")
    res.statusCode = proxyDrainStatus
    res.end("OK\n")
  } else if (req.url === "/stats/prometheus" && proxyMetricsFail) {
    res.statusCode = 500
    res.end()
  } else if (req.url === "/stats/prometheus") {
    res.setHeader("content-type", "text/plain; version=0.0.4")
    res.end("# TYPE proxy_server_live gauge\nproxy_server_live 1\n")
  } else {
    res.statusCode = 404
    res.end()
  }
})

// --- the application ----------------------------------------------------------------------
let appMetricsMode: "negotiate" | "fail" | "hang" = "negotiate"
let lastProbeHeaders: IncomingHttpHeaders = {}
const app = createServer((req, res) => {
  if (req.url === "/metrics") {
    if (appMetricsMode === "hang") return
    if (appMetricsMode === "fail") {
      res.statusCode = 500
      return res.end()
    }
    if ((req.headers.accept ?? "").includes("application/openmetrics-text")) {
      res.setHeader("content-type", OM)
      return res.end("# TYPE app_requests counter\napp_requests_total 7\n# EOF\n")
    }
    res.setHeader("content-type", "text/plain; version=0.0.4")
    return res.end("# TYPE app_requests_total counter\napp_requests_total 7\n")
  }
  lastProbeHeaders = req.headers
  if (req.url === "/ready") return res.end("ok")
  if (req.url === "/redirect") {
    res.writeHead(302, { location: "/elsewhere" })
    return res.end()
  }
  if (req.url === "/teapot") {
    res.statusCode = 418
    return res.end()
  }
  if (req.url === "/slow") return // never answers
  res.statusCode = 404
  res.end()
})

// --- a gRPC health server -----------------------------------------------------------------
const grpcServer = new grpc.Server()
grpcServer.addService(healthServiceDefinition(), {
  Check: (
    call: grpc.ServerUnaryCall<{ service: string }, unknown>,
    callback: grpc.sendUnaryData<{ status: string }>,
  ) => {
    const service = call.request.service
    if (service === "" || service === "ok") return callback(null, { status: "SERVING" })
    if (service === "down") return callback(null, { status: "NOT_SERVING" })
    callback({ code: grpc.status.NOT_FOUND, details: "unknown service" }, null)
  },
})

let scope: Scope.CloseableScope
let statusPort: number
let readinessPort: number
let stsPort: number
let closedPort: number
let quits = 0

const status = (path: string, init?: RequestInit) => fetch(`http://127.0.0.1:${statusPort}${path}`, init)

beforeAll(async () => {
  const proxyPort = await listen(proxyAdmin)
  const appPort = await listen(app)
  const grpcPort = await new Promise<number>((resolve, reject) =>
    grpcServer.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, port) =>
      e ? reject(e) : resolve(port),
    ),
  )
  ;[statusPort, readinessPort, stsPort, closedPort] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ])
  const probers = Either.getOrThrow(
    parseAppProbers(
      JSON.stringify({
        "/app-health/web/readyz": {
          httpGet: { path: "/ready", port: appPort, httpHeaders: [{ name: "X-Probe", value: "mesh" }] },
        },
        "/app-health/web/livez": { httpGet: { path: "/redirect", port: appPort } },
        "/app-health/web/startupz": { httpGet: { path: "/teapot", port: appPort } },
        "/app-health/slow/readyz": { httpGet: { path: "/slow", port: appPort }, timeoutSeconds: 1 },
        "/app-health/down/readyz": { httpGet: { path: "/", port: closedPort } },
        "/app-health/tcp/livez": { tcpSocket: { port: appPort } },
        "/app-health/tcp/readyz": { tcpSocket: { port: closedPort } },
        "/app-health/rpc/livez": { grpc: { port: grpcPort } },
        "/app-health/rpc/readyz": { grpc: { port: grpcPort, service: "ok" } },
        "/app-health/rpc/startupz": { grpc: { port: grpcPort, service: "down" } },
        "/app-health/rpc2/readyz": { grpc: { port: grpcPort, service: "nope" } },
        "/app-health/rpc2/livez": { grpc: { port: closedPort } },
        "/app-lifecycle/web/prestopz": { httpGet: { path: "/ready", port: appPort } },
        "/app-lifecycle/tcp/poststartz": { tcpSocket: { port: closedPort } },
      }),
    ),
  )
  const layer = statusServersLayer({
    readiness: { host: "127.0.0.1", port: readinessPort },
    agentStatus: { host: undefined, port: statusPort },
    proxyAdminPort: proxyPort,
    appMetrics: { port: appPort, path: "/metrics" },
    appProbers: probers,
    stsPort,
    quit: Effect.sync(() => {
      quits++
    }),
  }).pipe(
    Layer.provide(Layer.succeed(AgentReadiness, AgentReadiness.of({ check: Effect.succeed({ ready: true }) }))),
    Layer.provide(metricsLayer("mesh-agent")),
  )
  scope = Effect.runSync(Scope.make())
  await Effect.runPromise(Layer.buildWithScope(layer, scope))
}, 30_000)

afterAll(async () => {
  if (scope) await Effect.runPromise(Scope.close(scope, Exit.void))
  proxyAdmin.close()
  app.close()
  grpcServer.forceShutdown()
})

describe("merged /stats/prometheus", () => {
  it("OpenMetrics when the application answers it: agent + proxy + app, one # EOF at the end", async () => {
    appMetricsMode = "negotiate"
    const response = await status("/stats/prometheus", { headers: { accept: `${OM},text/plain;q=0.5` } })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe(OM)
    const body = await response.text()
    expect(body).toMatch(/^scrapes_total \d+$/m)
    expect(body).toMatch(/^mesh_build\{component="mesh-agent"/m)
    expect(body).toContain("proxy_server_live 1\n")
    expect(body).toContain("app_requests_total 7\n")
    expect(body.match(/# EOF/g)).toHaveLength(1)
    expect(body.endsWith("app_requests_total 7\n# EOF\n")).toBe(true)
    // agent, then proxy, then application
    expect(body.indexOf("scrapes_total")).toBeLessThan(body.indexOf("proxy_server_live"))
    expect(body.indexOf("proxy_server_live")).toBeLessThan(body.indexOf("app_requests_total"))
  })

  it("text format 0.0.4 without # EOF when the scraper asks for text", async () => {
    appMetricsMode = "negotiate"
    const response = await status("/stats/prometheus")
    expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
    const body = await response.text()
    expect(body).toContain("proxy_server_live 1\n")
    expect(body).toContain("app_requests_total 7\n")
    expect(body).not.toContain("# EOF")
  })

  it("a failing application is left out and counted; the page still answers 200", async () => {
    appMetricsMode = "fail"
    const before = await failures("application")
    const response = await status("/stats/prometheus", { headers: { accept: OM } })
    expect(response.status).toBe(200)
    const body = await response.text()
    expect(body).toContain("proxy_server_live 1\n")
    expect(body).not.toContain("app_requests_total")
    expect(body).not.toContain("# EOF")
    expect(await failures("application")).toBe(before + 1)
  })

  it("a hanging application is cut at the scraper's deadline", async () => {
    appMetricsMode = "hang"
    const before = await failures("application")
    const started = Date.now()
    const response = await status("/stats/prometheus", { headers: { "x-prometheus-scrape-timeout-seconds": "0.3" } })
    expect(response.status).toBe(200)
    expect(Date.now() - started).toBeLessThan(3000)
    expect(await response.text()).toContain("proxy_server_live 1\n")
    appMetricsMode = "negotiate"
    expect(await failures("application")).toBe(before + 1)
  })
})

describe("merged /stats/prometheus, failing proxy", () => {
  it("a failing proxy admin is left out and counted as type proxy", async () => {
    const before = await failures("proxy")
    proxyMetricsFail = true
    const response = await status("/stats/prometheus")
    proxyMetricsFail = false
    expect(response.status).toBe(200)
    const body = await response.text()
    expect(body).not.toContain("proxy_server_live")
    expect(body).toContain("app_requests_total 7\n")
    expect(await failures("proxy")).toBe(before + 1)
  })
})

/** scrape_failures_total{type} as the page reports it (0 before the first failure), from a scrape that succeeds. */
const failures = async (type: string) => {
  const mode = appMetricsMode
  appMetricsMode = "negotiate" // this scrape itself must not fail
  const body = await (await status("/stats/prometheus")).text()
  appMetricsMode = mode
  const match = body.match(new RegExp(`^scrape_failures_total\\{type="${type}"\\} (\\d+)$`, "m"))
  return match ? Number(match[1]) : 0
}

describe("/quitquitquit and /drain", () => {
  it("non-POST is 405 and does nothing", async () => {
    expect((await status("/quitquitquit")).status).toBe(405)
    expect((await status("/drain")).status).toBe(405)
    expect(quits).toBe(0)
    expect(proxyEvents).toEqual([])
  })

  it.skipIf(externalIPv4 === undefined)("refuses callers that are not on the pod's loopback (403)", async () => {
    for (const path of ["/quitquitquit", "/drain"]) {
      const response = await fetch(`http://${externalIPv4}:${statusPort}${path}`, { method: "POST" })
      expect(response.status).toBe(403)
    }
    expect(quits).toBe(0)
    expect(proxyEvents).toEqual([])
  })

  it("POST /drain from localhost drains the proxy's inbound listeners gracefully", async () => {
    const response = await status("/drain", { method: "POST" })
    expect(response.status).toBe(200)
    expect(proxyEvents).toEqual(["drain"])
  })

  it("a failing proxy drain answers 500 with the reason", async () => {
    proxyDrainStatus = 503
    const response = await status("/drain", { method: "POST" })
    proxyDrainStatus = 200
    expect(response.status).toBe(500)
    expect(await response.text()).toMatch(/failed to drain: HTTP 503/)
  })

  it("POST /quitquitquit from localhost answers OK and quits", async () => {
    const response = await status("/quitquitquit", { method: "POST" })
    expect(response.status).toBe(200)
    await expect.poll(() => quits).toBe(1)
  })
})

describe("rewritten application probes", () => {
  const probe = async (path: string) => (await status(path)).status

  it("HTTP: 2xx and 3xx are 200, with the probe's headers; other answers keep their status", async () => {
    expect(await probe("/app-health/web/readyz")).toBe(200)
    expect(lastProbeHeaders["x-probe"]).toBe("mesh")
    expect(await probe("/app-health/web/livez")).toBe(200)
    expect(await probe("/app-health/web/startupz")).toBe(418)
  })

  it("HTTP: an unreachable or silent application is 503 (the silent one after its timeoutSeconds)", async () => {
    expect(await probe("/app-health/down/readyz")).toBe(503)
    const started = Date.now()
    expect(await probe("/app-health/slow/readyz")).toBe(503)
    expect(Date.now() - started).toBeGreaterThanOrEqual(900)
  })

  it("lifecycle hooks the injector moved to /app-lifecycle/ are run like probes", async () => {
    expect(await probe("/app-lifecycle/web/prestopz")).toBe(200)
    expect(await probe("/app-lifecycle/tcp/poststartz")).toBe(503)
    expect(await probe("/app-lifecycle/other/prestopz")).toBe(404)
  })

  it("TCP: a listening port is 200, a closed one 503", async () => {
    expect(await probe("/app-health/tcp/livez")).toBe(200)
    expect(await probe("/app-health/tcp/readyz")).toBe(503)
  })

  it("gRPC health: SERVING is 200; NOT_SERVING, an unknown service and no server are 503", async () => {
    expect(await probe("/app-health/rpc/livez")).toBe(200)
    expect(await probe("/app-health/rpc/readyz")).toBe(200)
    expect(await probe("/app-health/rpc/startupz")).toBe(503)
    expect(await probe("/app-health/rpc2/readyz")).toBe(503)
    expect(await probe("/app-health/rpc2/livez")).toBe(503)
  })

  it("a path with no prober is 404", async () => {
    const response = await status("/app-health/other/readyz")
    expect(response.status).toBe(404)
    expect(await response.text()).toMatch(/app prober config does not exist for \/app-health\/other\/readyz/)
  })
})

describe("readiness port and --stsPort", () => {
  it("the readiness port serves /healthz/ready only", async () => {
    expect((await fetch(`http://127.0.0.1:${readinessPort}/healthz/ready`)).status).toBe(200)
    expect((await fetch(`http://127.0.0.1:${readinessPort}/stats/prometheus`)).status).toBe(404)
    expect((await fetch(`http://127.0.0.1:${readinessPort}/quitquitquit`, { method: "POST" })).status).toBe(404)
  })

  it("a non-zero --stsPort serves the token exchange: an incomplete request is a 400 OAuth error", async () => {
    const response = await fetch(`http://127.0.0.1:${stsPort}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=urn:ietf:params:oauth:grant-type:token-exchange",
    })
    expect(response.status).toBe(400)
    expect(response.headers.get("content-type")).toMatch(/application\/json/)
    expect(await response.json()).toMatchObject({ error: "invalid_request" })
    expect((await fetch(`http://127.0.0.1:${stsPort}/other`)).status).toBe(404)
  })
})

describe("proxyless, without application metrics", () => {
  it("serves the agent's metrics alone and answers /drain with nothing to drain", async () => {
    const port = await freePort()
    const local = Effect.runSync(Scope.make())
    try {
      await Effect.runPromise(
        Layer.buildWithScope(
          statusServersLayer({
            readiness: { host: "127.0.0.1", port: await freePort() },
            agentStatus: { host: "127.0.0.1", port },
            stsPort: 0,
            quit: Effect.void,
          }).pipe(
            Layer.provide(
              Layer.succeed(
                AgentReadiness,
                AgentReadiness.of({ check: Effect.succeed({ ready: false, reason: "x" }) }),
              ),
            ),
            Layer.provide(metricsLayer("mesh-agent")),
          ),
          local,
        ),
      )
      const page = await fetch(`http://127.0.0.1:${port}/stats/prometheus`)
      expect(page.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
      const body = await page.text()
      expect(body).toMatch(/^scrapes_total 1$/m)
      expect(body).not.toMatch(/proxy_server_live|app_requests/)
      expect(body).not.toMatch(/^scrape_failures_total\{/m)
      const drain = await fetch(`http://127.0.0.1:${port}/drain`, { method: "POST" })
      expect(drain.status).toBe(200)
      expect(await drain.text()).toMatch(/no proxy to drain/)
      expect((await fetch(`http://127.0.0.1:${port}/healthz/ready`)).status).toBe(503)
    } finally {
      await Effect.runPromise(Scope.close(local, Exit.void))
    }
  })
})
