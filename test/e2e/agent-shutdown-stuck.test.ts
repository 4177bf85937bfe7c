/**
 * SIGTERM while clients that never finish hold each of mesh-agent's listeners (issue 34,
 * finding 10, for the agent): slowloris request heads on the readiness, status and token-exchange
 * ports, a token request whose body never arrives, xDS and SDS streams whose peer stopped
 * reading on the agent's Unix sockets, and a DNS-over-TCP client that sends half a length prefix.
 * Before, a slowloris on any HTTP listener kept the agent up for good (over 148 s, killed), and
 * so did one xDS stream with EXIT_ON_ZERO_ACTIVE_CONNECTIONS. Now it stops after its drain
 * (MINIMUM_DRAIN_DURATION, 5s by default) and the HTTP listeners' bounded close: exit 0, every
 * stuck connection closed, no process left.
 */

import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import * as http2 from "node:http2"
import { connect as netConnect } from "node:net"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { TypeUrl } from "../../src/services/xds/protocol/type-urls.js"
import { type ControlPlane, startControlPlane } from "../fixtures/agent/control-plane.js"
import { ECHO, endpoint, input, service } from "../fixtures/xds/mesh.js"
import { freePort } from "../support/ports.js"
import { type Daemon, startDaemon } from "../support/processes.js"
import { adsFrame, openRawStream } from "../support/raw-ads.js"
import { type StuckClient, slowloris, stalledBody } from "../support/stuck-clients.js"

/** The termination drain: MINIMUM_DRAIN_DURATION's default, which also caps terminationDrainDuration. */
const DRAIN_MS = 5000
/**
 * The status listeners close before the drain and give a request in flight (the stalled token
 * request) up to DEFAULT_DRAIN (src/layers/http/connection-drain.ts) first: the agent sets no
 * shutdown countdown of its own.
 */
const HTTP_DRAIN_MS = 5000
/** After the drain: closing what is left and the process exit. */
const MARGIN_MS = 1500
const NODE = { id: "sidecar~127.0.0.1~stuck.default~default.svc.cluster.local", metadata: { fields: {} } }

let controlPlane: ControlPlane
let dir: string
let agent: Daemon | undefined
const cleanups: Array<() => void> = []

beforeAll(async () => {
  controlPlane = await startControlPlane(
    input({ services: [service(ECHO, [80])], endpoints: [endpoint(ECHO, "127.0.0.1", 9)] }),
  )
}, 60_000)

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup()
  if (agent?.process.exitCode === null) await agent.stop("SIGKILL")
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
})

afterAll(async () => {
  await controlPlane?.close()
})

const start = async (env: Record<string, string> = {}) => {
  dir = await mkdtemp(join(tmpdir(), "mesh-agent-shutdown-"))
  await mkdir(join(dir, "etc/mesh/config"), { recursive: true })
  await mkdir(join(dir, "var/run/secrets/mesh"), { recursive: true })
  await writeFile(join(dir, "var/run/secrets/mesh/root-cert.pem"), controlPlane.rootPem)
  await writeFile(join(dir, "token"), await controlPlane.issuer.token({ sub: "system:serviceaccount:default:sleep" }))
  await writeFile(
    join(dir, "etc/mesh/config/mesh"),
    `defaultConfig:\n  discoveryAddress: 127.0.0.1:${controlPlane.xds.port}\n  controlPlaneAuthPolicy: NONE\n`,
  )
  const ports = { readiness: await freePort(), status: await freePort(), sts: await freePort(), dns: await freePort() }
  // never the machine's resolver, should a query be forwarded
  await writeFile(join(dir, "resolv.conf"), "nameserver 127.0.0.1\n")
  agent = startDaemon(
    "mesh-agent",
    ["proxy", "--stsPort", String(ports.sts)],
    {
      DISABLE_PROXY: "true",
      CA_ADDR: `127.0.0.1:${controlPlane.caPort}`,
      MESHD_SAN: "meshd.mesh-system.svc",
      MESH_TOKEN_PATH: join(dir, "token"),
      POD_NAME: "sleep-1",
      POD_NAMESPACE: "default",
      SERVICE_ACCOUNT: "sleep",
      INSTANCE_IP: "127.0.0.1",
      PROXY_STATUS_PORT: String(ports.readiness),
      STATUS_PORT: String(ports.status),
      MESH_META_DNS_CAPTURE: "true",
      DNS_PROXY_ADDR: `127.0.0.1:${ports.dns}`,
      DNS_PROXY_RESOLV_CONF: join(dir, "resolv.conf"),
      ECC_SIGNATURE_ALGORITHM: "ECDSA",
      ...env,
    },
    dir,
  )
  await agent.waitFor(/gRPC xDS bootstrap written/, 30_000)
  await agent.waitFor(/readiness listening/, 30_000)
  await agent.waitFor(/token exchange listening/, 30_000)
  await agent.waitFor(/DNS proxy listening/, 30_000)
  const sds = (await agent.waitFor(/SDS server listening on (\S+)/, 30_000))[1]!
  return { ...ports, xds: join(dir, "etc/mesh/proxy/XDS"), sds: resolve(dir, sds) }
}

const attach = async (client: Promise<StuckClient>): Promise<StuckClient> => {
  const attached = await client
  cleanups.push(attached.destroy)
  return attached
}

/** An HTTP/2 connection to a Unix socket whose streams' receive windows are 0. */
const pausedSession = (path: string) => {
  const session = http2.connect("http://localhost", {
    createConnection: () => netConnect(path),
    settings: { initialWindowSize: 0 },
  })
  session.on("error", () => undefined)
  const closed = new Promise<void>((resolve) => session.once("close", () => resolve()))
  return { session, closed }
}

/** An ADS stream through the agent's xDS proxy that never reads; resolves once its answer is waiting. */
const pausedXds = async (path: string): Promise<StuckClient> => {
  const { session, closed } = pausedSession(path)
  const raw = openRawStream(session, "StreamAggregatedResources")
  await raw.send({ node: NODE, type_url: TypeUrl.Cluster })
  // Headers come before any data and need no window: the proxy answered the stream.
  await new Promise<void>((resolve) => raw.stream.once("response", () => resolve()))
  return { name: "paused xDS stream", closed, destroy: () => session.destroy() }
}

/** An SDS stream asking for the workload certificate that never reads it. */
const pausedSds = async (path: string): Promise<StuckClient> => {
  const { session, closed } = pausedSession(path)
  const stream = session.request({
    ":method": "POST",
    ":path": "/envoy.service.secret.v3.SecretDiscoveryService/StreamSecrets",
    "content-type": "application/grpc",
    te: "trailers",
  })
  stream.on("error", () => undefined)
  stream.write(
    adsFrame("StreamAggregatedResources", {
      node: NODE,
      type_url: "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret",
      resource_names: ["default"],
    }),
  )
  await new Promise<void>((resolve) => stream.once("response", () => resolve()))
  return { name: "paused SDS stream", closed, destroy: () => session.destroy() }
}

/** A DNS-over-TCP client that sends one byte of a two-byte length prefix. */
const halfDnsQuery = (port: number): Promise<StuckClient> =>
  new Promise((resolve, reject) => {
    const socket = netConnect(port, "127.0.0.1")
    socket.on("error", () => undefined)
    const closed = new Promise<void>((done) => socket.once("close", () => done()))
    socket.once("connect", () =>
      socket.write(Buffer.from([0]), () =>
        resolve({ name: "half a DNS query", closed, destroy: () => socket.destroy() }),
      ),
    )
    socket.once("close", () => reject(new Error("DNS connection closed before it was established")))
  })

const processGone = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return false
  } catch {
    return true
  }
}

const terminate = async (daemon: Daemon) => {
  const started = Date.now()
  const code = await daemon.stop("SIGTERM")
  return { code, took: Date.now() - started }
}

describe("mesh-agent shutdown with stuck clients", () => {
  it("exits 0 after its drain and the HTTP listeners' bounded close, every stuck connection closed", async () => {
    const at = await start()
    const clients = [
      await attach(slowloris("slowloris readiness", at.readiness)),
      await attach(slowloris("slowloris status", at.status)),
      await attach(slowloris("slowloris token exchange", at.sts)),
      await attach(
        stalledBody("stalled body token exchange", at.sts, { method: "POST", path: "/token", contentLength: 1000 }),
      ),
      await attach(pausedXds(at.xds)),
      await attach(pausedSds(at.sds)),
      await attach(halfDnsQuery(at.dns)),
    ]
    const daemon = agent!
    const outcome = await terminate(daemon)
    console.log(`agent shutdown with ${clients.length} stuck clients: ${outcome.took}ms, exit ${outcome.code}`)
    expect(outcome.code, daemon.output().slice(-3000)).toBe(0)
    expect(outcome.took).toBeLessThanOrEqual(HTTP_DRAIN_MS + DRAIN_MS + MARGIN_MS)
    expect(processGone(daemon.process.pid!)).toBe(true)
    const open = await Promise.all(
      clients.map((client) =>
        Promise.race([
          client.closed.then(() => ""),
          new Promise<string>((resolve) => setTimeout(() => resolve(client.name), 2000)),
        ]),
      ),
    )
    expect(open.filter((name) => name !== "")).toEqual([])
  }, 90_000)

  it("with EXIT_ON_ZERO_ACTIVE_CONNECTIONS, an xDS client that stopped reading holds the drain only so long", async () => {
    // The drain waits 1s, then for zero active streams at most the termination drain (capped at
    // MINIMUM_DRAIN_DURATION: 1s) more; the xDS proxy then cuts the stream.
    const at = await start({ EXIT_ON_ZERO_ACTIVE_CONNECTIONS: "true", MINIMUM_DRAIN_DURATION: "1s" })
    const client = await attach(pausedXds(at.xds))
    const daemon = agent!
    const outcome = await terminate(daemon)
    console.log(`agent shutdown, exit on zero connections, one stuck stream: ${outcome.took}ms, exit ${outcome.code}`)
    expect(outcome.code, daemon.output().slice(-3000)).toBe(0)
    expect(outcome.took).toBeLessThanOrEqual(2000 + MARGIN_MS)
    expect(daemon.output()).toMatch(/drain over after 1s more with 1 active connection\(s\)/)
    expect(processGone(daemon.process.pid!)).toBe(true)
    await client.closed
  }, 60_000)
})
