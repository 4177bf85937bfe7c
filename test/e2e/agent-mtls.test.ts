/**
 * End-to-end mutual TLS between proxyless workloads with agent-issued identities: two built
 * `mesh-agent proxy` processes (client `sleep`, server `echo`) get certificates from the real CA.
 * Both applications are real @grpc/grpc-js-xds programs configured only by their agent's
 * bootstrap: the echo server is an `XdsServer` (its own process: the bootstrap is process-wide)
 * whose inbound listener asks for client certificates because a STRICT PeerAuthentication
 * applies; the client's `file_watcher` provider supplies its certificate because a
 * DestinationRule asks for mesh mutual TLS. The server answers with the SPIFFE identity it saw.
 * The client's certificate (SECRET_TTL 4s) renews several times during a steady stream of RPCs
 * that all succeed. An AuthorizationPolicy denying the client's principal turns its RPCs into
 * PERMISSION_DENIED; removing it lets them through again.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as grpc from "@grpc/grpc-js"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { ResourceOf } from "../../src/services/config-model/specs.js"
import type { PushContextInput } from "../../src/services/xds/model/push-context.js"
import { type ControlPlane, startControlPlane } from "../fixtures/agent/control-plane.js"
import { EchoClient } from "../fixtures/xds/echo-backend.js"
import { destinationRule, ECHO, endpoint, input, peerAuthentication, resource, service } from "../fixtures/xds/mesh.js"
import { freePort } from "../support/ports.js"
import { type Daemon, ROOT, startDaemon } from "../support/processes.js"

let cp: ControlPlane
let dir: string
let serverPort: number
let server: ChildProcess | undefined
let serverOutput = ""
let sleep: Awaited<ReturnType<typeof startAgent>>
let mesh: PushContextInput
const agents: Array<Daemon> = []
const SLEEP_ID = "spiffe://cluster.local/ns/default/sa/sleep"

const startAgent = async (name: string, serviceAccount: string, extra: Record<string, string> = {}) => {
  const home = join(dir, name)
  await mkdir(join(home, "etc/mesh/config"), { recursive: true })
  await mkdir(join(home, "var/run/secrets/mesh"), { recursive: true })
  await writeFile(join(home, "var/run/secrets/mesh/root-cert.pem"), cp.rootPem)
  await writeFile(
    join(home, "token"),
    await cp.issuer.token({ sub: `system:serviceaccount:default:${serviceAccount}` }),
  )
  await writeFile(
    join(home, "etc/mesh/config/mesh"),
    `defaultConfig:\n  discoveryAddress: 127.0.0.1:${cp.xds.port}\n  controlPlaneAuthPolicy: NONE\n`,
  )
  const agent = startDaemon(
    "mesh-agent",
    ["proxy"],
    {
      DISABLE_PROXY: "true",
      CA_ADDR: `127.0.0.1:${cp.caPort}`,
      MESHD_SAN: "meshd.mesh-system.svc",
      MESH_TOKEN_PATH: join(home, "token"),
      POD_NAME: `${name}-1`,
      POD_NAMESPACE: "default",
      SERVICE_ACCOUNT: serviceAccount,
      INSTANCE_IP: "127.0.0.1",
      PROXY_STATUS_PORT: String(await freePort()),
      STATUS_PORT: "0",
      MINIMUM_DRAIN_DURATION: "0s",
      ECC_SIGNATURE_ALGORITHM: "ECDSA",
      ...extra,
    },
    home,
  )
  agents.push(agent)
  await agent.waitFor(/gRPC xDS bootstrap written/, 30_000)
  return { home, agent, certDir: join(home, "var/lib/mesh/data") }
}

// Mesh-wide (root namespace) policies: the ADS server does not yet hand the requesting node to
// the generators, and without it an inbound listener sees only mesh-wide policies.
const authorizationPolicy = (name: string, spec: unknown): ResourceOf<"AuthorizationPolicy"> => ({
  ...resource("AuthorizationPolicy", name, spec, "mesh-system"),
  group: "security.mesh.io",
})

/** The XdsServer application, with the server agent's bootstrap; resolves once it serves. */
const startServer = (bootstrap: string) =>
  new Promise<void>((resolve, reject) => {
    server = spawn(process.execPath, [join(ROOT, "test/fixtures/agent/xds-echo-server.mjs"), String(serverPort)], {
      cwd: ROOT,
      env: {
        ...process.env,
        GRPC_XDS_BOOTSTRAP: bootstrap,
        GRPC_XDS_EXPERIMENTAL_RBAC: "true",
        GRPC_TRACE: process.env.MTLS_TRACE ?? "",
        GRPC_VERBOSITY: "DEBUG",
      },
      stdio: ["ignore", "pipe", "pipe"],
    })
    const timer = setTimeout(() => reject(new Error(`XdsServer not serving:\n${serverOutput}`)), 30_000)
    const append = (chunk: Buffer) => {
      serverOutput += chunk.toString()
      if (/serving on \d+/.test(serverOutput)) {
        clearTimeout(timer)
        resolve()
      }
    }
    server.stdout?.on("data", append)
    server.stderr?.on("data", append)
    server.once("exit", (code) => reject(new Error(`XdsServer exited (${code}):\n${serverOutput}`)))
  })

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mesh-agent-mtls-"))
  serverPort = await freePort()
  mesh = {
    ...input({
      services: [service(ECHO, [80])],
      endpoints: [endpoint(ECHO, "127.0.0.1", serverPort, { serviceAccount: "echo" })],
      destinationRules: [destinationRule("echo", { host: "echo", trafficPolicy: { tls: { mode: "ISTIO_MUTUAL" } } })],
      peerAuthentications: [peerAuthentication("default", { mtls: { mode: "STRICT" } }, "mesh-system")],
    }),
    authorizationPolicies: [],
  }
  cp = await startControlPlane(mesh)
  const echo = await startAgent("echo", "echo")
  await startServer(join(echo.home, "etc/mesh/proxy/grpc-bootstrap.json"))
  sleep = await startAgent("sleep", "sleep", { SECRET_TTL: "4s" })
}, 90_000)

afterAll(async () => {
  if (server !== undefined && server.exitCode === null) {
    const exited = new Promise((resolve) => server!.once("exit", resolve))
    server.kill("SIGKILL")
    await exited
  }
  for (const a of agents) if (a.process.exitCode === null) await a.stop("SIGKILL")
  await cp?.close()
  await rm(dir, { recursive: true, force: true })
})

const clientRun = (bootstrap: string, durationMs: number) =>
  new Promise<{
    total: number
    failures: Array<{ code?: number; details?: string }>
    backends: Array<string>
  }>((resolve, reject) => {
    execFile(
      process.execPath,
      [join(ROOT, "test/fixtures/agent/xds-echo-client.mjs"), `${ECHO}:80`, "0", String(durationMs)],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          GRPC_XDS_BOOTSTRAP: bootstrap,
          XDS_CREDENTIALS: "1",
          GRPC_TRACE: process.env.MTLS_TRACE ?? "",
          GRPC_VERBOSITY: "DEBUG",
        },
        timeout: 60_000,
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        if (process.env.MTLS_TRACE) console.log(stderr.slice(-8000))
        if (error) reject(new Error(`${error.message}\n${stderr}`))
        else resolve(JSON.parse(stdout.trim().split("\n").pop()!))
      },
    )
  })

describe("mutual TLS between proxyless workloads with agent-issued certificates", () => {
  it("the server sees the client's SPIFFE identity; renewals during a steady RPC stream fail no RPC", async () => {
    const bootstrap = JSON.parse(await readFile(join(sleep.home, "etc/mesh/proxy/grpc-bootstrap.json"), "utf8"))
    expect(bootstrap.certificate_providers.default.config.refresh_interval).toBe("1s")
    const out = await clientRun(join(sleep.home, "etc/mesh/proxy/grpc-bootstrap.json"), 9_000)
    expect(out.failures).toEqual([])
    expect(out.total).toBeGreaterThan(20)
    expect(out.backends).toEqual([`URI:${SLEEP_ID}`])
    const renewals = sleep.agent.output().match(/workload certificate for \S+ renewed/g) ?? []
    console.log(`mTLS: ${out.total} RPCs, ${out.failures.length} failed, ${renewals.length} client renewals`)
    expect(renewals.length).toBeGreaterThanOrEqual(3)
  }, 90_000)

  it("an AuthorizationPolicy denying the client's principal turns its RPCs into PERMISSION_DENIED, and back", async () => {
    // The client in this process: its bootstrap is read once, at the first xDS channel.
    process.env.GRPC_XDS_BOOTSTRAP = join(sleep.home, "etc/mesh/proxy/grpc-bootstrap.json")
    const xds = await import("@grpc/grpc-js-xds")
    xds.register()
    const client = new EchoClient(`xds:///${ECHO}:80`, new xds.XdsChannelCredentials(grpc.credentials.createInsecure()))
    const call = () =>
      new Promise<{ readonly code?: number; readonly backend?: string }>((resolve) =>
        client.makeUnaryRequest(
          "/mesh.test.Echo/Echo",
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.alloc(0),
          { deadline: Date.now() + 5000 },
          (error, response) => resolve(error ? { code: error.code } : { backend: response!.toString() }),
        ),
      )
    /** Calls until `done` holds for a result (polling a condition, bounded); returns the elapsed ms. */
    const until = async (done: (r: { code?: number; backend?: string }) => boolean, what: string) => {
      const start = Date.now()
      let last: { code?: number; backend?: string } = {}
      while (Date.now() - start < 20_000) {
        last = await call()
        if (done(last)) return Date.now() - start
        await new Promise((r) => setTimeout(r, 50))
      }
      throw new Error(`timed out waiting for ${what}; last result ${JSON.stringify(last)}\n${serverOutput}`)
    }
    try {
      await until((r) => r.backend === `URI:${SLEEP_ID}`, "a first successful RPC")
      const deny = authorizationPolicy("deny-sleep", {
        action: "DENY",
        rules: [{ from: [{ source: { principals: ["cluster.local/ns/default/sa/sleep"] } }] }],
      })
      await Effect.runPromise(cp.xds.update({ ...mesh, authorizationPolicies: [deny] }))
      const denied = await until((r) => r.code === grpc.status.PERMISSION_DENIED, "PERMISSION_DENIED")
      // A policy for someone else's principal leaves the client alone.
      const other = authorizationPolicy("deny-other", {
        action: "DENY",
        rules: [{ from: [{ source: { principals: ["cluster.local/ns/default/sa/other"] } }] }],
      })
      await Effect.runPromise(cp.xds.update({ ...mesh, authorizationPolicies: [other] }))
      const allowed = await until((r) => r.backend === `URI:${SLEEP_ID}`, "RPCs allowed again")
      const again = await Promise.all(Array.from({ length: 20 }, call))
      expect(again.filter((r) => r.backend !== `URI:${SLEEP_ID}`)).toEqual([])
      console.log(`RBAC: denied after ${denied} ms, allowed again after ${allowed} ms`)
      expect(denied).toBeLessThan(10_000)
      expect(allowed).toBeLessThan(10_000)
    } finally {
      client.close()
    }
  }, 90_000)
})
