/**
 * End-to-end mutual TLS between proxyless workloads with agent-issued identities: two built
 * `mesh-agent proxy` processes (client `sleep`, server `echo`) get certificates from the real CA.
 * The echo server is a grpc-js TLS server requiring client certificates, built from the server
 * agent's files; the client is a real @grpc/grpc-js-xds application using the client agent's
 * bootstrap, whose `file_watcher` provider supplies its certificate once a DestinationRule asks
 * for mesh mutual TLS. The server answers with the SPIFFE identity it saw. The client's
 * certificate (SECRET_TTL 4s) renews several times during a steady stream of RPCs that all
 * succeed.
 */
import { execFile } from "node:child_process"
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as grpc from "@grpc/grpc-js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ControlPlane, freePort, startControlPlane } from "../fixtures/agent/control-plane.js"
import { echoService } from "../fixtures/xds/echo-backend.js"
import { destinationRule, ECHO, endpoint, input, service } from "../fixtures/xds/mesh.js"
import { type Daemon, ROOT, startDaemon } from "../support/processes.js"

let cp: ControlPlane
let dir: string
let server: grpc.Server
let serverPort: number
const agents: Array<Daemon> = []

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

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mesh-agent-mtls-"))
  serverPort = await freePort()
  cp = await startControlPlane(
    input({
      services: [service(ECHO, [80])],
      endpoints: [endpoint(ECHO, "127.0.0.1", serverPort, { serviceAccount: "echo" })],
      destinationRules: [destinationRule("echo", { host: "echo", trafficPolicy: { tls: { mode: "ISTIO_MUTUAL" } } })],
    }),
  )
  const echo = await startAgent("echo", "echo")
  const [key, chain, root] = await Promise.all(
    ["key.pem", "cert-chain.pem", "root-cert.pem"].map((f) => readFile(join(echo.certDir, f))),
  )
  server = new grpc.Server()
  server.addService(echoService, {
    Echo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      const san = call.getAuthContext().sslPeerCertificate?.subjectaltname ?? "no client certificate"
      callback(null, Buffer.from(san))
    },
  })
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(
      `127.0.0.1:${serverPort}`,
      grpc.ServerCredentials.createSsl(root!, [{ private_key: key!, cert_chain: chain! }], true),
      (error) => (error ? reject(error) : resolve()),
    ),
  )
}, 90_000)

afterAll(async () => {
  for (const a of agents) if (a.process.exitCode === null) await a.stop("SIGKILL")
  server?.forceShutdown()
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
    const sleep = await startAgent("sleep", "sleep", { SECRET_TTL: "4s" })
    const bootstrap = JSON.parse(await readFile(join(sleep.home, "etc/mesh/proxy/grpc-bootstrap.json"), "utf8"))
    expect(bootstrap.certificate_providers.default.config.refresh_interval).toBe("1s")
    const out = await clientRun(join(sleep.home, "etc/mesh/proxy/grpc-bootstrap.json"), 9_000)
    expect(out.failures).toEqual([])
    expect(out.total).toBeGreaterThan(20)
    expect(out.backends).toEqual(["URI:spiffe://cluster.local/ns/default/sa/sleep"])
    const renewals = sleep.agent.output().match(/workload certificate for \S+ renewed/g) ?? []
    console.log(`mTLS: ${out.total} RPCs, ${out.failures.length} failed, ${renewals.length} client renewals`)
    expect(renewals.length).toBeGreaterThanOrEqual(3)
  }, 90_000)
})
