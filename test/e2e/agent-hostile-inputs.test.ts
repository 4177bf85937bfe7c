/**
 * Attacks on the built `mesh-agent proxy` (issue 34, findings 2 and 8), its memory read from
 * /proc/<pid>/status while they run:
 * - WasmPlugins whose module URL answers an endless body (one fail-open, one fail-closed): each
 *   fetch stops at MESH_WASM_MAX_BINARY_SIZE_BYTES (64 MiB by default) with a log line naming the
 *   URL and the limit, RSS stays bounded (the body goes to a temporary file, never to memory,
 *   and no temporary file is left), the fail-open plugin becomes allow-all RBAC and the
 *   fail-closed one deny-all, and a healthy plugin in the same response is still served;
 * - with WASM_REFUSE_METADATA_ADDRESSES, a module on a link-local address (where metadata
 *   services answer), literal or behind a redirect to its IPv4-mapped form, is refused without a
 *   connection (169.254.0.1 rather than the metadata address itself: the unfixed build dials it);
 * - `--stsPort`: a chunked body without Content-Length, sent without end, gets 413 as soon as it
 *   passes 64 KiB, the connection is closed, and RSS stays where it was.
 * A guard kills the agent if RSS passes 1 GiB, so the pre-fix build fails here quickly.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { createServer, type Server, type ServerResponse } from "node:http"
import { type AddressInfo, connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeAdsClient } from "../../src/layers/xds-client/ads-client.js"
import { emptyProxyConfigInput } from "../../src/services/xds/model/push-context.js"
import { plainToStruct } from "../../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../../src/services/xds/protocol/type-urls.js"
import { TypedConfig } from "../../src/services/xds/proxygen/well-known.js"
import type { AdsClientShape } from "../../src/services/xds-client/client.js"
import { type ControlPlane, startControlPlane } from "../fixtures/agent/control-plane.js"
import { input, resource } from "../fixtures/xds/mesh.js"
import { wasmModule } from "../layers/agent/wasm/helpers.js"
import { freePorts } from "../support/ports.js"
import { type Daemon, startDaemon } from "../support/processes.js"

// biome-ignore lint/suspicious/noExplicitAny: decoded protos are walked loosely in assertions
type J = any

const MiB = 1024 * 1024
/** The default of MESH_WASM_MAX_BINARY_SIZE_BYTES: the agent runs without the variable. */
const MODULE_LIMIT = 64 * MiB
/** The issue's budget for an agent under attack. */
const RSS_BOUND = 256 * MiB
/** Past this the agent is killed: the unfixed build grows by gigabytes. */
const RSS_GUARD = 1024 * MiB
const ECDS = TypeUrl.ExtensionConfig
const NODE_ID = "sidecar~127.0.0.1~app-1.default~default.svc.cluster.local"
const GOOD = wasmModule("healthy plugin")

const ecdsName = (name: string) => `extensions.mesh.io/wasmplugin/default.${name}`

/** Memory of a process from /proc/<pid>/status, in bytes. */
const memoryOf = async (pid: number) => {
  const status = await readFile(`/proc/${pid}/status`, "utf8")
  const field = (name: string) => Number(status.match(new RegExp(`^${name}:\\s+(\\d+) kB`, "m"))?.[1] ?? 0) * 1024
  return { rss: field("VmRSS"), hwm: field("VmHWM") }
}

/** Samples a process's RSS until stopped; kills it past RSS_GUARD. */
const watchMemory = (daemon: Daemon) => {
  const started = Date.now()
  let peak = 0
  let killed = false
  let killedAfter = 0
  const timer = setInterval(() => {
    const pid = daemon.process.pid
    if (pid === undefined || daemon.process.exitCode !== null) return
    memoryOf(pid).then(
      ({ rss }) => {
        peak = Math.max(peak, rss)
        if (rss > RSS_GUARD && !killed) {
          killed = true
          killedAfter = Date.now() - started
          daemon.process.kill("SIGKILL")
        }
      },
      () => undefined,
    )
  }, 50)
  return {
    peak: () => peak,
    killed: () => killed,
    /** How long after start-up the guard killed the agent. */
    killedAfter: () => killedAfter,
    stop: () => clearInterval(timer),
  }
}

interface Endless {
  readonly port: number
  /** Bytes written so far per path, and whether the client closed each connection. */
  readonly sent: Map<string, { bytes: number; closed: boolean }>
  readonly close: () => Promise<void>
}

/** Serves GOOD at /good.wasm, redirects /redirect-* to metadata addresses, and never ends any other body. */
const startModuleServer = () =>
  new Promise<Endless>((resolve) => {
    const sent = new Map<string, { bytes: number; closed: boolean }>()
    const chunk = Buffer.alloc(256 * 1024, 7)
    const pour = (path: string, res: ServerResponse) => {
      const record = { bytes: 0, closed: false }
      sent.set(path, record)
      res.on("close", () => {
        record.closed = true
      })
      const write = () => {
        while (!res.destroyed) {
          record.bytes += chunk.length
          if (!res.write(chunk)) return void res.once("drain", write)
        }
      }
      res.writeHead(200, { "content-type": "application/wasm" })
      write()
    }
    const server: Server = createServer((req, res) => {
      const path = req.url ?? "/"
      if (path === "/good.wasm") return void res.end(GOOD)
      if (path === "/redirect-mapped") {
        res.writeHead(302, { location: "http://[::ffff:169.254.0.1]/filter.wasm" })
        return void res.end()
      }
      pour(path, res)
    })
    server.listen(0, "127.0.0.1", () =>
      resolve({
        port: (server.address() as AddressInfo).port,
        sent,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          }),
      }),
    )
  })

let cp: ControlPlane
let modules: Endless
let dir: string
let agent: Daemon
let memory: ReturnType<typeof watchMemory>
let stsPort: number
let readinessPort: number

const plugin = (name: string, spec: Record<string, unknown>) => ({
  ...resource("WasmPlugin", name, spec),
  group: "extensions.mesh.io",
  meta: { name, namespace: "default", labels: {}, annotations: {}, resourceVersion: "1" },
})

beforeAll(async () => {
  modules = await startModuleServer()
  const url = (path: string) => `http://127.0.0.1:${modules.port}${path}`
  cp = await startControlPlane({
    ...input({}),
    proxyConfig: {
      ...emptyProxyConfigInput,
      wasmPlugins: [
        plugin("endless-open", { url: url("/endless-open.wasm"), failStrategy: "FAIL_OPEN" }),
        plugin("endless-closed", { url: url("/endless-closed.wasm") }),
        plugin("healthy", { url: url("/good.wasm") }),
        plugin("metadata", { url: "http://169.254.0.1/filter.wasm" }),
        plugin("metadata-redirect", { url: url("/redirect-mapped") }),
      ] as J,
    },
  })
  dir = await mkdtemp(join(tmpdir(), "mesh-agent-hostile-"))
  await mkdir(join(dir, "etc/mesh/config"), { recursive: true })
  await mkdir(join(dir, "var/run/secrets/mesh"), { recursive: true })
  await writeFile(join(dir, "var/run/secrets/mesh/root-cert.pem"), cp.rootPem)
  await writeFile(join(dir, "token"), await cp.issuer.token({ sub: "system:serviceaccount:default:app" }))
  await writeFile(
    join(dir, "etc/mesh/config/mesh"),
    `defaultConfig:\n  discoveryAddress: 127.0.0.1:${cp.xds.port}\n  controlPlaneAuthPolicy: NONE\n`,
  )
  ;[stsPort, readinessPort] = await freePorts(2)
  agent = startDaemon(
    "mesh-agent",
    ["proxy", "--stsPort", String(stsPort)],
    {
      DISABLE_PROXY: "true",
      CA_ADDR: `127.0.0.1:${cp.caPort}`,
      MESHD_SAN: "meshd.mesh-system.svc",
      MESH_TOKEN_PATH: join(dir, "token"),
      POD_NAME: "app-1",
      POD_NAMESPACE: "default",
      SERVICE_ACCOUNT: "app",
      INSTANCE_IP: "127.0.0.1",
      PROXY_STATUS_PORT: String(readinessPort),
      STATUS_PORT: "0",
      MINIMUM_DRAIN_DURATION: "0s",
      ECC_SIGNATURE_ALGORITHM: "ECDSA",
      WASM_REFUSE_METADATA_ADDRESSES: "true",
      // one attempt: the endless body is the attack, not the retries
      WASM_HTTP_REQUEST_MAX_RETRIES: "1",
    },
    dir,
  )
  memory = watchMemory(agent)
  await agent.waitFor(/readiness listening/, 30_000)
}, 60_000)

afterAll(async () => {
  memory?.stop()
  if (agent && agent.process.exitCode === null) await agent.stop("SIGKILL")
  await cp?.close()
  await modules?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

/** Runs `use` with an ADS client on the agent's xDS socket, as the proxy would connect. */
const withProxyStream = async <A>(use: (client: AdsClientShape) => Promise<A>) => {
  const scope = await Effect.runPromise(Scope.make())
  try {
    const client = await Effect.runPromise(
      makeAdsClient({
        address: `unix://${join(dir, "etc/mesh/proxy/XDS")}`,
        mode: "sotw",
        node: { id: NODE_ID, metadata: plainToStruct({}) },
      }).pipe(Scope.extend(scope)),
    )
    return await use(client)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

describe("mesh-agent proxy under hostile inputs (built binary)", () => {
  it("an endless Wasm module body stops at the size limit: RSS bounded, fail-open/closed applied, clear log", async () => {
    const baseline = await memoryOf(agent.process.pid!)
    const started = Date.now()
    const names = ["endless-open", "endless-closed", "healthy", "metadata", "metadata-redirect"].map(ecdsName)
    const report = async () => {
      const now = await memoryOf(agent.process.pid!).catch(() => ({ rss: 0, hwm: 0 }))
      const peak = Math.max(memory.peak(), now.hwm)
      const served = [...modules.sent].map(([path, s]) => `${path} ${Math.round(s.bytes / MiB)} MiB`).join(", ")
      console.log(
        `Wasm endless body: ${Date.now() - started} ms; agent RSS ${Math.round(baseline.rss / MiB)} MiB before, peak ${Math.round(peak / MiB)} MiB${memory.killed() ? ` (killed by the ${RSS_GUARD / MiB} MiB guard ${memory.killedAfter()} ms after start)` : ""}; served ${served}`,
      )
      return peak
    }
    const held = await withProxyStream(async (client) => {
      await Effect.runPromise(client.subscribe(ECDS, names))
      const snapshot = await Effect.runPromise(
        client.waitFor((s) => (s.types.get(ECDS)?.resources.size ?? 0) === names.length, "45 seconds"),
      )
      return (name: string): J => snapshot.types.get(ECDS)?.resources.get(ecdsName(name))?.resource
    }).finally(() => (memory.killed() ? report() : undefined))
    const peak = await report()
    expect(memory.killed()).toBe(false)
    expect(peak).toBeLessThan(RSS_BOUND)

    // fail open: RBAC without rules; fail closed (the default): RBAC denying everything
    expect(held("endless-open").typed_config).toEqual({ "@type": TypedConfig.rbac })
    expect(held("endless-closed").typed_config["@type"]).toBe(TypedConfig.rbac)
    expect(held("endless-closed").typed_config.rules.action).toBe("DENY")
    // the healthy plugin of the same response still reaches the proxy as a local file
    const local = held("healthy").typed_config.config.vm_config.code.local.filename as string
    expect(await readFile(local)).toEqual(GOOD)

    // the download was cut at the limit: the server saw its connection closed
    for (const path of ["/endless-open.wasm", "/endless-closed.wasm"]) {
      const served = modules.sent.get(path)
      expect(served?.closed, path).toBe(true)
      expect(served!.bytes, path).toBeLessThan(MODULE_LIMIT + 16 * MiB)
      await agent.waitFor(
        new RegExp(
          `cannot fetch Wasm module http://127\\.0\\.0\\.1:${modules.port}${path.replace(".", "\\.")}: .*larger than ${MODULE_LIMIT} bytes \\(MESH_WASM_MAX_BINARY_SIZE_BYTES\\)`,
        ),
        1000,
      )
    }
    // nothing of the refused downloads is left in the cache directory
    const cacheDir = join(dir, "var/lib/mesh/data/wasm")
    expect((await readdir(cacheDir)).filter((name) => name.endsWith(".tmp"))).toEqual([])
  })

  it("WASM_REFUSE_METADATA_ADDRESSES refuses a metadata address, literal or behind a redirect, without connecting", async () => {
    await agent.waitFor(
      /cannot fetch Wasm module http:\/\/169\.254\.0\.1\/filter\.wasm: .*169\.254\.0\.1 is link-local/,
      1000,
    )
    await agent.waitFor(
      /cannot fetch Wasm module http:\/\/127\.0\.0\.1:\d+\/redirect-mapped: .*::ffff:a9fe:1 is link-local/,
      1000,
    )
  })

  it("--stsPort: an endless chunked body gets 413 once past 64 KiB and a closed connection, RSS unchanged", async () => {
    const before = await memoryOf(agent.process.pid!)
    const started = Date.now()
    const outcome = await new Promise<{ head: string; sent: number; closed: boolean }>((resolve, reject) => {
      const socket = connect(stsPort, "127.0.0.1")
      let received = ""
      let sent = 0
      let done = false
      const chunk = `${(64 * 1024).toString(16)}\r\n${"s".repeat(64 * 1024)}\r\n`
      const finish = (closed: boolean) => {
        if (done) return
        done = true
        socket.destroy()
        resolve({ head: received.split("\r\n\r\n")[0] ?? "", sent, closed })
      }
      // keep sending (no last chunk) until the server answers or 300 MiB went out; the unfixed
      // build never answers a body that does not end: give up 5 s after the last byte
      const pump = () => {
        while (!done && sent < 300 * MiB) {
          sent += 64 * 1024
          if (!socket.write(chunk)) return void socket.once("drain", pump)
        }
        if (!done) setTimeout(() => finish(false), 5000)
      }
      socket.on("data", (data) => {
        received += data.toString("latin1")
      })
      socket.on("end", () => finish(true))
      socket.on("close", () => finish(true))
      socket.on("error", (e: NodeJS.ErrnoException) =>
        e.code === "ECONNRESET" || e.code === "EPIPE" ? finish(true) : reject(e),
      )
      socket.write(
        "POST /token HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/x-www-form-urlencoded\r\ntransfer-encoding: chunked\r\n\r\n",
      )
      pump()
    })
    const elapsed = Date.now() - started
    const after = await memoryOf(agent.process.pid!)
    console.log(
      `STS chunked body: ${outcome.head.split("\r\n")[0]} after ${elapsed} ms, ${Math.round(outcome.sent / MiB)} MiB sent; agent RSS ${Math.round(before.rss / MiB)} → ${Math.round(after.rss / MiB)} MiB (peak ${Math.round(after.hwm / MiB)} MiB)`,
    )
    expect(outcome.head).toMatch(/^HTTP\/1\.1 413/)
    expect(outcome.closed).toBe(true)
    expect(elapsed).toBeLessThan(5000)
    expect(outcome.sent).toBeLessThan(64 * MiB)
    expect(after.rss - before.rss).toBeLessThan(32 * MiB)
    expect(memory.killed()).toBe(false)
  })
})
