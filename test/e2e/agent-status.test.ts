/**
 * End-to-end, the built `mesh-agent proxy` in sidecar mode (stand-in proxy) with its status
 * port: the merged /stats/prometheus (agent + stand-in proxy + an application named by
 * MESH_PROMETHEUS_ANNOTATIONS, one trailing # EOF when the application speaks OpenMetrics;
 * the text page parses with promtool), a rewritten /app-health probe, POST /drain reaching the
 * proxy admin, the --stsPort placeholder, and POST /quitquitquit ending the agent with exit 0
 * after stopping the proxy. A bad MESH_ORCH_APP_PROBERS stops start-up with exit 1.
 */
import { execFile } from "node:child_process"
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ControlPlane, startControlPlane } from "../fixtures/agent/control-plane.js"
import { ECHO, endpoint, input, service } from "../fixtures/xds/mesh.js"
import { freePort } from "../support/ports.js"
import { type Daemon, ROOT, startDaemon } from "../support/processes.js"

const OM = "application/openmetrics-text; version=1.0.0; charset=utf-8"

let cp: ControlPlane
let dir: string
let agent: Daemon
let statusPort: number
let stsPort: number

const app = createServer((req, res) => {
  if (req.url === "/metrics") {
    if ((req.headers.accept ?? "").includes("application/openmetrics-text")) {
      res.setHeader("content-type", OM)
      return res.end("# TYPE app_requests counter\n# HELP app_requests Requests.\napp_requests_total 7\n# EOF\n")
    }
    res.setHeader("content-type", "text/plain; version=0.0.4")
    return res.end("# HELP app_requests_total Requests.\n# TYPE app_requests_total counter\napp_requests_total 7\n")
  }
  if (req.url === "/ready") return res.end("ok")
  res.statusCode = 500
  res.end()
})

const events = async (from = dir) =>
  (await readFile(join(from, "record"), "utf8").catch(() => ""))
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as { event: string; url?: string })

const exitCode = (daemon: Daemon) =>
  new Promise<number | null>((resolve) =>
    daemon.process.exitCode !== null ? resolve(daemon.process.exitCode) : daemon.process.once("exit", resolve),
  )

const status = (path: string, init?: RequestInit) => fetch(`http://127.0.0.1:${statusPort}${path}`, init)

/** A sidecar-mode agent directory: mesh config pointing at the stand-in proxy, root cert, token. */
const prepare = async (into: string) => {
  const wrapper = join(into, "proxy")
  await writeFile(
    wrapper,
    `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, "test/fixtures/agent/fake-proxy.mjs")}" "$@"\n`,
  )
  await chmod(wrapper, 0o755)
  await mkdir(join(into, "etc/mesh/config"), { recursive: true })
  await mkdir(join(into, "var/run/secrets/mesh"), { recursive: true })
  await writeFile(join(into, "var/run/secrets/mesh/root-cert.pem"), cp.rootPem)
  await writeFile(join(into, "token"), await cp.issuer.token({ sub: "system:serviceaccount:default:app" }))
  await writeFile(
    join(into, "etc/mesh/config/mesh"),
    [
      "defaultConfig:",
      `  discoveryAddress: 127.0.0.1:${cp.xds.port}`,
      "  controlPlaneAuthPolicy: NONE",
      `  binaryPath: ${wrapper}`,
      `  proxyAdminPort: ${await freePort()}`,
      "",
    ].join("\n"),
  )
  return {
    CA_ADDR: `127.0.0.1:${cp.caPort}`,
    MESHD_SAN: "meshd.mesh-system.svc",
    MESH_TOKEN_PATH: join(into, "token"),
    POD_NAME: "app-1",
    POD_NAMESPACE: "default",
    SERVICE_ACCOUNT: "app",
    INSTANCE_IP: "127.0.0.1",
    PROXY_STATUS_PORT: String(await freePort()),
    MINIMUM_DRAIN_DURATION: "100ms",
    EXIT_ON_ZERO_ACTIVE_CONNECTIONS: "true",
    ECC_SIGNATURE_ALGORITHM: "ECDSA",
    FAKE_PROXY_RECORD: join(into, "record"),
  }
}

beforeAll(async () => {
  cp = await startControlPlane(input({ services: [service(ECHO, [80])], endpoints: [endpoint(ECHO, "127.0.0.1", 9)] }))
  dir = await mkdtemp(join(tmpdir(), "mesh-agent-status-"))
  const appPort = await new Promise<number>((resolve) =>
    app.listen(0, "127.0.0.1", () => resolve((app.address() as { port: number }).port)),
  )
  statusPort = await freePort()
  stsPort = await freePort()
  agent = startDaemon(
    "mesh-agent",
    ["proxy", "--stsPort", String(stsPort)],
    {
      ...(await prepare(dir)),
      STATUS_PORT: String(statusPort),
      MESH_PROMETHEUS_ANNOTATIONS: JSON.stringify({ scrape: "true", path: "/metrics", port: String(appPort) }),
      MESH_ORCH_APP_PROBERS: JSON.stringify({
        "/app-health/app/readyz": { httpGet: { path: "/ready", port: appPort } },
        "/app-health/app/livez": { httpGet: { path: "/broken", port: appPort } },
      }),
    },
    dir,
  )
  await agent.waitFor(/agent status listening/, 30_000)
  await agent.waitFor(/token exchange listening/, 30_000)
  // the stand-in proxy's admin listener, whose metrics the page merges
  const limit = Date.now() + 30_000
  while (!(await events()).some((e) => e.event === "listening")) {
    if (Date.now() > limit) throw new Error("the stand-in proxy never listened")
    await new Promise((r) => setTimeout(r, 20))
  }
}, 60_000)

afterAll(async () => {
  if (agent && agent.process.exitCode === null) await agent.stop("SIGKILL")
  app.close()
  await cp?.close()
  await rm(dir, { recursive: true, force: true })
})

describe("mesh-agent status port (sidecar, stand-in proxy)", () => {
  it("merges agent, proxy and application metrics with one # EOF at the end for OpenMetrics", async () => {
    const response = await status("/stats/prometheus", { headers: { accept: OM } })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe(OM)
    const body = await response.text()
    expect(body).toMatch(/^mesh_build\{component="mesh-agent"/m)
    expect(body).toMatch(/^scrapes_total \d+$/m)
    expect(body).toContain("proxy_server_live 1\n")
    expect(body).toContain("app_requests_total 7\n")
    expect(body.match(/# EOF/g)).toHaveLength(1)
    expect(body.endsWith("app_requests_total 7\n# EOF\n")).toBe(true)
  })

  it("serves text format 0.0.4 otherwise, which promtool parses", async () => {
    const response = await status("/stats/prometheus")
    expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
    const body = await response.text()
    expect(body).toContain("proxy_server_live 1\n")
    expect(body).toContain("app_requests_total 7\n")
    expect(body).not.toContain("# EOF")
    const checked = await new Promise<{ code: number; output: string } | undefined>((resolve) => {
      const child = execFile("promtool", ["check", "metrics"], (error, stdout, stderr) => {
        if (error !== null && (error as NodeJS.ErrnoException).code === "ENOENT") return resolve(undefined)
        resolve({ code: error === null ? 0 : Number(error.code), output: stdout + stderr })
      })
      child.stdin?.end(body)
    })
    if (checked === undefined) return // promtool (Debian prometheus) not installed
    // exit 3 = lint advice only (prom-client's own nodejs_* names); 1 = the page does not parse
    expect(checked.output).not.toMatch(/error while linting|parsing error/)
    expect(checked.code).not.toBe(1)
  })

  it("answers a rewritten application probe by probing the application", async () => {
    expect((await status("/app-health/app/readyz")).status).toBe(200)
    expect((await status("/app-health/app/livez")).status).toBe(500)
    expect((await status("/app-health/other/readyz")).status).toBe(404)
  })

  it("--stsPort exchanges a subject token for an access token on /token", async () => {
    const claims = { exp: Math.floor(Date.now() / 1000) + 600, sub: "spiffe://cluster.local/ns/default/sa/app" }
    const jwt = ["{}", JSON.stringify(claims), "sig"].map((p) => Buffer.from(p).toString("base64url")).join(".")
    const response = await fetch(`http://127.0.0.1:${stsPort}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
        subject_token: jwt,
        subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
      }).toString(),
    })
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ access_token: jwt, token_type: "Bearer" })
    expect((await fetch(`http://127.0.0.1:${stsPort}/token`, { method: "POST" })).status).toBe(400)
  })

  it("POST /drain from localhost drains the proxy's inbound listeners; GET is 405", async () => {
    expect((await status("/drain")).status).toBe(405)
    expect((await events()).some((e) => e.event === "drain")).toBe(false)
    expect((await status("/drain", { method: "POST" })).status).toBe(200)
    expect((await events()).filter((e) => e.event === "drain").map((e) => e.url)).toEqual([
      "/drain_listeners?inboundonly&graceful",
    ])
  })

  it("POST /quitquitquit from localhost stops the proxy and ends the agent with exit code 0", async () => {
    expect((await status("/quitquitquit")).status).toBe(405)
    expect(agent.process.exitCode).toBeNull()
    const response = await status("/quitquitquit", { method: "POST" })
    expect(response.status).toBe(200)
    expect(await exitCode(agent)).toBe(0)
    expect((await events()).map((e) => e.event).slice(-1)).toEqual(["sigterm"])
  }, 30_000)
})

describe("mesh-agent proxy start-up", () => {
  it("a bad MESH_ORCH_APP_PROBERS stops it with exit 1 and names the variable", async () => {
    const other = await mkdtemp(join(tmpdir(), "mesh-agent-status-bad-"))
    try {
      const daemon = startDaemon(
        "mesh-agent",
        ["proxy"],
        { ...(await prepare(other)), STATUS_PORT: "0", MESH_ORCH_APP_PROBERS: '{"/app-health/a/readyz": {' },
        other,
      )
      expect(await exitCode(daemon)).toBe(1)
      expect(daemon.output()).toMatch(/MESH_ORCH_APP_PROBERS: invalid JSON/)
      // refused before anything started: the proxy was never launched
      expect(await events(other)).toEqual([])
    } finally {
      await rm(other, { recursive: true, force: true })
    }
  }, 30_000)

  it("a MESH_PROMETHEUS_ANNOTATIONS port equal to the status port is refused with exit 1", async () => {
    const other = await mkdtemp(join(tmpdir(), "mesh-agent-status-bad-"))
    try {
      const daemon = startDaemon(
        "mesh-agent",
        ["proxy"],
        { ...(await prepare(other)), STATUS_PORT: "15999", MESH_PROMETHEUS_ANNOTATIONS: '{"port":"15999"}' },
        other,
      )
      expect(await exitCode(daemon)).toBe(1)
      expect(daemon.output()).toMatch(/MESH_PROMETHEUS_ANNOTATIONS: .*agent status port/)
    } finally {
      await rm(other, { recursive: true, force: true })
    }
  }, 30_000)
})
