/**
 * mesh-discovery as users run it: the built binary on a copy of the example mesh (examples/mesh,
 * with the reviews ServiceEntry pointed at two gRPC echo backends), driven by a real
 * @grpc/grpc-js-xds application in a child process. Checks routing (canary split and header
 * match), /ready, /debug/syncz and /debug/config_dump, a VirtualService file edit reaching the
 * client's existing channel, the request command (when 15014 is free), and SIGTERM.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { generateKeyPairSync } from "node:crypto"
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer as createHttpServer } from "node:http"
import { type AddressInfo, createServer } from "node:net"
import { networkInterfaces, tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EchoBackend, startEchoBackend } from "../fixtures/xds/echo-backend.js"
import { proxylessBootstrap } from "../support/discovery.js"
import { type Daemon, ROOT, run, startDaemon } from "../support/processes.js"
import { outboundHttp } from "../support/proxygen/evaluator.js"
import { StandInType, startStandInProxy } from "../support/proxygen/stand-in-proxy.js"

const TARGET = "reviews.demo.svc.cluster.local:9080"
const NODE_ID = "sidecar~127.0.0.1~client.demo~demo.svc.cluster.local"
const SHUTDOWN_MS = 3000

let dir = ""
let daemon: Daemon
let monitoring = ""
let httpAddr = ""
let ads = ""
let monitoringIs15014 = false
let v1: EchoBackend
let v2: EchoBackend
let client: ChildProcessWithoutNullStreams | undefined
let clientOutput = ""
const pending = new Map<number, (counts: Record<string, number>) => void>()
let nextId = 0

const canBind = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = createServer()
    server.once("error", () => resolve(false))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
  })

/** Polls `check` until it returns a value (not undefined), within a time limit. */
const until = async <A>(what: string, check: () => Promise<A | undefined>, ms = 20_000): Promise<A> => {
  const limit = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > limit) throw new Error(`timed out waiting for ${what}\n${daemon.output().slice(-3000)}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

/** Asks the client process for `count` RPCs on its one channel; resolves with who answered. */
const calls = (count: number, headers: Record<string, string> = {}): Promise<Record<string, number>> =>
  new Promise((resolve, reject) => {
    if (client === undefined || client.exitCode !== null) return reject(new Error(`client gone: ${clientOutput}`))
    const id = nextId++
    pending.set(id, resolve)
    client.stdin.write(`${JSON.stringify({ id, count, headers })}\n`)
  })

const getJson = async (url: string): Promise<{ status: number; body: unknown }> => {
  const response = await fetch(url)
  const text = await response.text()
  try {
    return { status: response.status, body: JSON.parse(text) }
  } catch {
    return { status: response.status, body: text }
  }
}

beforeAll(async () => {
  ;[v1, v2] = await Promise.all([startEchoBackend("reviews-v1"), startEchoBackend("reviews-v2")])
  dir = mkdtempSync(join(tmpdir(), "discovery-process-"))
  cpSync(join(ROOT, "examples/mesh"), join(dir, "mesh"), { recursive: true })
  const services = join(dir, "mesh/services.yaml")
  writeFileSync(
    services,
    readFileSync(services, "utf8")
      .replace("http: 19081", `http: ${v1.port}`)
      .replace("http: 19082", `http: ${v2.port}`),
  )
  monitoringIs15014 = await canBind(15014)
  daemon = startDaemon(
    "mesh-discovery",
    [
      "discovery",
      "--configDir",
      join(dir, "mesh"),
      "--registries",
      "Mock",
      "--grpcAddr",
      "127.0.0.1:0",
      // every interface, so a non-loopback caller can be refused the debug interface
      "--httpAddr",
      "0.0.0.0:0",
      "--monitoringAddr",
      monitoringIs15014 ? "127.0.0.1:15014" : "127.0.0.1:0",
      "--secureGRPCAddr",
      "127.0.0.1:0",
      "--httpsAddr",
      "127.0.0.1:0",
      "--ctrlz_address",
      "127.0.0.1",
      "--ctrlz_port",
      "0",
      "--shutdownDuration",
      `${SHUTDOWN_MS / 1000}s`,
    ],
    { PILOT_DEBOUNCE_AFTER: "10ms", PILOT_DEBOUNCE_MAX: "1s", UNSAFE_ENABLE_ADMIN_ENDPOINTS: "true" },
    dir,
  )
  ads = (await daemon.waitFor(/ADS server listening on ([\d.]+:\d+)/, 30_000))[1]!
  monitoring = (await daemon.waitFor(/monitoring listening on ([\d.]+:\d+)/, 30_000))[1]!
  httpAddr = `127.0.0.1:${(await daemon.waitFor(/http listening on [\d.]+:(\d+)/, 30_000))[1]!}`
  await daemon.waitFor(/first configuration received: serving xDS/, 30_000)
  if (monitoringIs15014 && !monitoring.endsWith(":15014")) monitoringIs15014 = false

  const bootstrap = join(dir, "grpc-bootstrap.json")
  writeFileSync(bootstrap, proxylessBootstrap(ads, NODE_ID))
  client = spawn(process.execPath, [join(ROOT, "test/fixtures/xds/echo-client-repl.mjs"), TARGET], {
    cwd: ROOT,
    env: { ...process.env, GRPC_XDS_BOOTSTRAP: bootstrap },
    stdio: ["pipe", "pipe", "pipe"],
  })
  // One JSON report per line.
  createInterface({ input: client.stdout }).on("line", (line) => {
    clientOutput += `${line}\n`
    const message = JSON.parse(line) as { id: number; counts: Record<string, number> }
    pending.get(message.id)?.(message.counts)
    pending.delete(message.id)
  })
  client.stderr.on("data", (chunk: Buffer) => {
    clientOutput += chunk.toString()
  })
}, 60_000)

afterAll(async () => {
  if (client !== undefined && client.exitCode === null) client.kill("SIGKILL")
  if (daemon !== undefined) await daemon.stop("SIGKILL")
  await Promise.all([v1, v2].map((b) => b?.close()))
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

interface SyncRow {
  proxy: string
  type: string
  nonceSent: string
  nonceAcked: string
  versionSent: string
  versionAcked: string
  lastError: string
}

describe("mesh-discovery discovery on the example mesh, with a real grpc-js-xds client", () => {
  it("is ready once config and registries have synced", async () => {
    await until("/ready 200", async () => ((await fetch(`http://${httpAddr}/ready`)).status === 200 ? true : undefined))
    expect((await fetch(`http://${monitoring}/ready`)).status).toBe(200)
  })

  it("serves the debug interface to loopback callers only", async (context) => {
    expect((await fetch(`http://${httpAddr}/debug/list`)).status).toBe(200)
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i !== undefined && i.family === "IPv4" && !i.internal)
    if (external === undefined) context.skip()
    const port = httpAddr.split(":")[1]
    expect((await fetch(`http://${external!.address}:${port}/debug/syncz`)).status).toBe(403)
    expect((await fetch(`http://${external!.address}:${port}/ready`)).status).toBe(200)
  })

  it("routes the client's RPCs: the 80/20 canary split and the header match", async () => {
    await until("a first routed RPC", async () => {
      const counts = await calls(1)
      return Object.keys(counts).some((k) => k.startsWith("reviews-")) ? true : undefined
    })
    const split = await calls(400)
    expect(Object.keys(split).sort()).toEqual(["reviews-v1", "reviews-v2"])
    const share = split["reviews-v1"]! / 400
    expect(share).toBeGreaterThan(0.7)
    expect(share).toBeLessThan(0.9)
    expect(await calls(20, { "end-user": "jason" })).toEqual({ "reviews-v2": 20 })
  })

  it("serves a sidecar (stand-in proxy) the example mesh's routes, accepted by the proxy's checks", async () => {
    const sidecarId = "sidecar~10.9.9.9~productpage-1.demo~demo.svc.cluster.local"
    const proxy = startStandInProxy({
      address: ads,
      node: { id: sidecarId, metadata: { NAMESPACE: "demo", LABELS: { app: "productpage" } } },
    })
    try {
      await proxy.waitFor((p) => p.version(StandInType.route) !== "" && p.version(StandInType.endpoint) !== "", 20_000)
      expect(proxy.nacks).toEqual([])
      const request = (headers: Record<string, string>) =>
        outboundHttp({
          listeners: proxy.resources(StandInType.listener),
          routes: proxy.resources(StandInType.route),
          port: 9080,
          host: "reviews.demo.svc.cluster.local",
          path: "/reviews/1",
          headers,
        })
      // The same VirtualService the gRPC client is routed by: the canary split and the test user.
      expect(request({})).toMatchObject({
        kind: "route",
        weightedClusters: [
          { name: "outbound|9080|v1|reviews.demo.svc.cluster.local", weight: 80 },
          { name: "outbound|9080|v2|reviews.demo.svc.cluster.local", weight: 20 },
        ],
      })
      expect(request({ "end-user": "jason" })).toMatchObject({
        kind: "route",
        cluster: "outbound|9080|v2|reviews.demo.svc.cluster.local",
      })
      // /debug/config_dump answers in the proxy's admin shape.
      const dump = await getJson(`http://${httpAddr}/debug/config_dump?proxyID=${encodeURIComponent(sidecarId)}`)
      expect(dump.status).toBe(200)
      const configs = (dump.body as { configs: Array<Record<string, unknown>> }).configs
      expect(configs.map((c) => c["@type"])).toEqual(
        expect.arrayContaining([
          "type.googleapis.com/envoy.admin.v3.ClustersConfigDump",
          "type.googleapis.com/envoy.admin.v3.ListenersConfigDump",
          "type.googleapis.com/envoy.admin.v3.RoutesConfigDump",
        ]),
      )
      expect(JSON.stringify(configs)).toContain("outbound|9080|v2|reviews.demo.svc.cluster.local")
    } finally {
      proxy.close()
    }
  })

  it("fetches a RequestAuthentication's JWKS itself and inlines it in the sidecar's inbound listener", async () => {
    // PILOT_JWT_ENABLE_REMOTE_JWKS defaults to the control plane fetching the keys.
    const { publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
    const kid = `e2e-key-${Date.now()}`
    const jwks = JSON.stringify({ keys: [{ ...publicKey.export({ format: "jwk" }), kid, use: "sig", alg: "ES256" }] })
    let fetched = 0
    const issuer = createHttpServer((_request, response) => {
      fetched++
      response.writeHead(200, { "content-type": "application/json" }).end(jwks)
    })
    await new Promise<void>((resolve) => issuer.listen(0, "127.0.0.1", resolve))
    const uri = `http://127.0.0.1:${(issuer.address() as AddressInfo).port}/jwks.json`
    writeFileSync(
      join(dir, "mesh/request-authentication.yaml"),
      `apiVersion: security.mesh.io/v1
kind: RequestAuthentication
metadata: { name: ratings-jwt, namespace: demo }
spec:
  selector: { matchLabels: { app: ratings } }
  jwtRules:
  - issuer: https://issuer.example.com
    jwksUri: ${uri}
`,
    )
    const proxy = startStandInProxy({
      address: ads,
      node: {
        id: "sidecar~10.9.9.8~ratings-1.demo~demo.svc.cluster.local",
        metadata: { NAMESPACE: "demo", LABELS: { app: "ratings" } },
      },
    })
    try {
      await proxy.waitFor((p) => JSON.stringify(p.resources(StandInType.listener)).includes(kid), 20_000)
      expect(proxy.nacks).toEqual([])
      expect(fetched).toBeGreaterThan(0)
      const inbound = JSON.stringify(proxy.resources(StandInType.listener).find((l) => l.name === "virtualInbound"))
      expect(inbound).toContain("local_jwks")
      expect(inbound).not.toContain("remote_jwks")
    } finally {
      proxy.close()
      rmSync(join(dir, "mesh/request-authentication.yaml"), { force: true })
      await new Promise((resolve) => issuer.close(resolve))
    }
  })

  it("serves a Gateway-API Gateway and HTTPRoute from the config directory to its gateway (stand-in proxy)", async () => {
    writeFileSync(
      join(dir, "mesh/gateway-api.yaml"),
      `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: edge, namespace: demo }
spec:
  gatewayClassName: mesh
  listeners:
  - { name: http, port: 8080, protocol: HTTP, hostname: "*.example.com" }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: reviews, namespace: demo }
spec:
  parentRefs: [{ name: edge }]
  hostnames: [reviews.example.com]
  rules:
  - matches: [{ path: { type: PathPrefix, value: /reviews } }]
    backendRefs: [{ name: reviews, port: 9080 }]
`,
    )
    const proxy = startStandInProxy({
      address: ads,
      node: {
        id: "router~10.9.9.7~edge-1.demo~demo.svc.cluster.local",
        metadata: { NAMESPACE: "demo", LABELS: { "gateway.networking.k8s.io/gateway-name": "edge" } },
      },
    })
    const request = (host: string, path: string) =>
      outboundHttp({
        listeners: proxy.resources(StandInType.listener),
        routes: proxy.resources(StandInType.route),
        port: 8080,
        host,
        path,
        headers: {},
      })
    try {
      await proxy.waitFor(
        (p) => p.version(StandInType.route) !== "" && request("reviews.example.com", "/reviews/1").kind === "route",
        20_000,
      )
      expect(proxy.nacks).toEqual([])
      expect(request("reviews.example.com", "/reviews/1")).toMatchObject({
        kind: "route",
        cluster: "outbound|9080||reviews.demo.svc.cluster.local",
      })
      // Outside the route's path prefix and hostnames: not found.
      expect(request("reviews.example.com", "/other").kind).not.toBe("route")
      expect(request("ratings.example.com", "/reviews/1").kind).not.toBe("route")
    } finally {
      proxy.close()
      rmSync(join(dir, "mesh/gateway-api.yaml"), { force: true })
    }
  })

  it("shows the client's ACKed versions in /debug/syncz and its resources in /debug/config_dump", async () => {
    const rows = await until("every type ACKed in syncz", async () => {
      const { status, body } = await getJson(`http://${monitoring}/debug/syncz`)
      expect(status).toBe(200)
      const mine = (body as Array<SyncRow>).filter((r) => r.proxy === NODE_ID)
      const types = new Set(mine.map((r) => r.type))
      const complete = ["cds", "eds", "lds", "rds"].every((t) => types.has(t))
      return complete && mine.every((r) => r.versionAcked !== "" && r.nonceAcked === r.nonceSent) ? mine : undefined
    })
    for (const row of rows) {
      expect(row.lastError).toBe("")
      expect(row.versionAcked).toBe(row.versionSent)
    }
    const dump = await getJson(`http://${httpAddr}/debug/config_dump?proxyID=${encodeURIComponent(NODE_ID)}`)
    expect(dump.status).toBe(200)
    expect(JSON.stringify(dump.body)).toContain(TARGET)
    expect((await fetch(`http://${httpAddr}/debug/config_dump?proxyID=nobody`)).status).toBe(404)
    expect((await fetch(`http://${monitoring}/debug/force_disconnect`)).status).toBe(400)
    const metrics = await (await fetch(`http://${monitoring}/metrics`)).text()
    expect(metrics).toMatch(/^pilot_info\{version="[^"]+"\} 1$/m)
  })

  it("delivers an edited VirtualService file to the client's existing channel", async () => {
    const routing = join(dir, "mesh/routing.yaml")
    const before = readFileSync(routing, "utf8")
    const canaryToV2 = before.replace(/subset: v1\n(\s+)weight: 80/, "subset: v2\n$1weight: 80")
    expect(canaryToV2).not.toBe(before)
    writeFileSync(routing, canaryToV2)
    await until("all calls answered by v2", async () => {
      const counts = await calls(20)
      return counts["reviews-v2"] === 20 ? true : undefined
    })
    const rows = await until("the new RDS version ACKed", async () => {
      const { body } = await getJson(`http://${monitoring}/debug/syncz`)
      const rds = (body as Array<SyncRow>).find((r) => r.proxy === NODE_ID && r.type === "rds")
      return rds !== undefined && rds.versionAcked === rds.versionSent && rds.nonceAcked === rds.nonceSent
        ? rds
        : undefined
    })
    expect(rows.lastError).toBe("")
  })

  it("force_disconnect (UNSAFE_ENABLE_ADMIN_ENDPOINTS) ends the client's stream; it reconnects and keeps routing", async () => {
    const connectionIds = async () => {
      const { body } = await getJson(`http://${monitoring}/debug/syncz`)
      return new Set(
        (body as Array<SyncRow & { connectionId: string }>)
          .filter((r) => r.proxy === NODE_ID)
          .map((r) => r.connectionId),
      )
    }
    const before = await connectionIds()
    expect(before.size).toBe(1)
    const response = await fetch(`http://${monitoring}/debug/force_disconnect?proxyID=${encodeURIComponent(NODE_ID)}`, {
      method: "POST",
    })
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ proxyID: NODE_ID, disconnected: 1 })
    await until("a new ACKed connection", async () => {
      const { body } = await getJson(`http://${monitoring}/debug/syncz`)
      const mine = (body as Array<SyncRow & { connectionId: string }>).filter((r) => r.proxy === NODE_ID)
      const fresh = mine.filter((r) => !before.has(r.connectionId))
      return fresh.length >= 4 && fresh.every((r) => r.versionAcked !== "") ? true : undefined
    })
    expect(await calls(20)).toEqual({ "reviews-v2": 20 })
  })

  it("answers `mesh-discovery request GET /debug/syncz` on port 15014 (skipped when 15014 was taken)", async (context) => {
    if (!monitoringIs15014) context.skip()
    const result = await run("mesh-discovery", ["request", "GET", "/debug/syncz"])
    expect(result.code, result.stderr).toBe(0)
    const rows = JSON.parse(result.stdout) as Array<SyncRow>
    expect(rows.some((r) => r.proxy === NODE_ID && r.versionAcked !== "")).toBe(true)
  })

  it("exits 0 on SIGTERM within --shutdownDuration, with the client still connected", async () => {
    const started = Date.now()
    const code = await daemon.stop("SIGTERM")
    expect(code).toBe(0)
    expect(Date.now() - started).toBeLessThan(SHUTDOWN_MS + 1000)
    expect(daemon.output()).toContain("discovery server stopped")
  })
})
