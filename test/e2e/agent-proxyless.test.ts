/**
 * End-to-end, proxyless gRPC: the built `mesh-agent proxy` (DISABLE_PROXY=true) gets its
 * certificate from the real CA (TLS, OIDC token), writes the certificate files and the gRPC
 * bootstrap, and proxies xDS to the real ADS server; a real @grpc/grpc-js-xds application in a
 * child process reads that bootstrap and its RPCs reach the echo backend through the agent's
 * xDS proxy. openssl verifies the files; readiness (before any application connects, as the
 * hold-application pattern needs), `mesh-agent wait` and the metrics page are checked; SIGTERM
 * stops the agent cleanly.
 */
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ControlPlane, startControlPlane } from "../fixtures/agent/control-plane.js"
import { type EchoBackend, startEchoBackend } from "../fixtures/xds/echo-backend.js"
import { ECHO, endpoint, input, service } from "../fixtures/xds/mesh.js"
import { execFileAsync } from "../layers/ca/helpers.js"
import { freePort } from "../support/ports.js"
import { type Daemon, ROOT, run, startDaemon } from "../support/processes.js"

const SUB = "system:serviceaccount:default:sleep"
const ID = "spiffe://cluster.local/ns/default/sa/sleep"

let controlPlane: ControlPlane
let backend: EchoBackend
let dir: string
let agentDir: string
let agent: Daemon
let readinessPort: number
let statusPort: number

const get = async (port: number, path: string) => {
  const response = await fetch(`http://127.0.0.1:${port}${path}`)
  return { status: response.status, body: await response.text() }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "mesh-agent-proxyless-"))
  backend = await startEchoBackend("echo-v1")
  controlPlane = await startControlPlane(
    input({ services: [service(ECHO, [80])], endpoints: [endpoint(ECHO, "127.0.0.1", backend.port)] }),
  )
  const { issuer, rootPem, xds } = controlPlane

  agentDir = join(dir, "agent")
  await mkdir(join(agentDir, "etc/mesh/config"), { recursive: true })
  await mkdir(join(agentDir, "var/run/secrets/mesh"), { recursive: true })
  await writeFile(join(agentDir, "var/run/secrets/mesh/root-cert.pem"), rootPem)
  await writeFile(join(agentDir, "token"), await issuer.token({ sub: SUB }))
  await writeFile(
    join(agentDir, "etc/mesh/config/mesh"),
    `defaultConfig:\n  discoveryAddress: 127.0.0.1:${xds.port}\n  controlPlaneAuthPolicy: NONE\n`,
  )
  readinessPort = await freePort()
  statusPort = await freePort()
  agent = startDaemon(
    "mesh-agent",
    ["proxy"],
    {
      DISABLE_PROXY: "true",
      CA_ADDR: `127.0.0.1:${controlPlane.caPort}`,
      MESHD_SAN: "meshd.mesh-system.svc",
      MESH_TOKEN_PATH: join(agentDir, "token"),
      POD_NAME: "sleep-1",
      POD_NAMESPACE: "default",
      SERVICE_ACCOUNT: "sleep",
      INSTANCE_IP: "127.0.0.1",
      MESH_META_APP: "sleep",
      PROXY_STATUS_PORT: String(readinessPort),
      STATUS_PORT: String(statusPort),
      MINIMUM_DRAIN_DURATION: "0s",
      ECC_SIGNATURE_ALGORITHM: "ECDSA",
    },
    agentDir,
  )
  await agent.waitFor(/gRPC xDS bootstrap written/, 30_000)
  await agent.waitFor(/readiness listening/, 30_000)
}, 60_000)

afterAll(async () => {
  if (agent && agent.process.exitCode === null) await agent.stop("SIGKILL")
  await controlPlane?.close()
  await backend?.close()
  await rm(dir, { recursive: true, force: true })
})

const clientRun = (bootstrap: string) =>
  new Promise<{ results: Array<{ backend?: string; code?: number }> }>((resolve, reject) => {
    execFile(
      process.execPath,
      [join(ROOT, "test/fixtures/agent/xds-echo-client.mjs"), `${ECHO}:80`, "10"],
      { cwd: ROOT, env: { ...process.env, GRPC_XDS_BOOTSTRAP: bootstrap }, timeout: 40_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${error.message}\n${stderr}`))
        else resolve(JSON.parse(stdout.trim().split("\n").pop()!))
      },
    )
  })

describe("mesh-agent proxy, proxyless gRPC", () => {
  it("writes certificates openssl verifies, for the pod's SPIFFE identity", async () => {
    const certDir = join(agentDir, "var/lib/mesh/data")
    const verify = await execFileAsync("openssl", [
      "verify",
      "-CAfile",
      join(certDir, "root-cert.pem"),
      join(certDir, "cert-chain.pem"),
    ])
    expect(verify.stdout).toContain(": OK")
    const text = await execFileAsync("openssl", ["x509", "-noout", "-text", "-in", join(certDir, "cert-chain.pem")])
    expect(text.stdout).toContain(`URI:${ID}`)
    expect(text.stdout).toContain("prime256v1")
  })

  it("is ready before the application connects (hold-application: `mesh-agent wait` returns first)", async () => {
    // no application has opened an xDS stream yet: certificates and the bootstrap are enough
    const before = (await get(statusPort, "/stats/prometheus")).body
    expect(before).not.toMatch(/^xds_proxy_requests [1-9]/m)
    const wait = await run("mesh-agent", [
      "wait",
      "--url",
      `http://127.0.0.1:${readinessPort}/healthz/ready`,
      "--timeoutSeconds",
      "10",
    ])
    expect(wait.code, wait.stderr).toBe(0)
    expect((await get(readinessPort, "/healthz/ready")).status).toBe(200)
    expect((await get(statusPort, "/stats/prometheus")).body).not.toMatch(/^xds_proxy_responses [1-9]/m)
  })

  it("a real grpc-js-xds application using the agent's bootstrap reaches the backend through the xDS proxy", async () => {
    const bootstrapPath = join(agentDir, "etc/mesh/proxy/grpc-bootstrap.json")
    const bootstrap = JSON.parse(readFileSync(bootstrapPath, "utf8"))
    expect(bootstrap.xds_servers[0].server_uri).toBe(`unix://${join(agentDir, "etc/mesh/proxy/XDS")}`)
    expect(bootstrap.node.id).toBe("sidecar~127.0.0.1~sleep-1.default~default.svc.cluster.local")
    expect(bootstrap.node.metadata).toMatchObject({ GENERATOR: "grpc", NAMESPACE: "default", APP: "sleep" })
    const out = await clientRun(bootstrapPath)
    expect(out.results.length).toBe(11)
    expect(out.results.every((r) => r.backend === "echo-v1")).toBe(true)
  }, 60_000)

  it("is ready afterwards: `mesh-agent wait` returns 0; the agent metrics page has the agent's metrics", async () => {
    const wait = await run("mesh-agent", [
      "wait",
      "--url",
      `http://127.0.0.1:${readinessPort}/healthz/ready`,
      "--timeoutSeconds",
      "10",
    ])
    expect(wait.code).toBe(0)
    expect((await get(statusPort, "/healthz/ready")).status).toBe(200)
    const page = (await get(statusPort, "/stats/prometheus")).body
    expect(page).toMatch(/^cert_expiry_seconds \d+/m)
    expect(page).toMatch(/^num_outgoing_requests\{request_type="csr"\} 1$/m)
    expect(page).toMatch(/^xds_proxy_responses [1-9]/m)
    expect(page).toMatch(/^xds_proxy_requests [1-9]/m)
    const startup = Number(page.match(/^startup_duration_seconds (\S+)$/m)?.[1])
    expect(startup).toBeGreaterThan(0)
  })

  it("with FILE_MOUNTED_CERTS, the bootstrap's file_watcher reads the mounted files and the application still gets through", async () => {
    // A second workload whose identity is mounted (here: a copy of the first agent's files).
    const mountedHome = join(dir, "mounted")
    await mkdir(join(mountedHome, "etc/certs"), { recursive: true })
    await mkdir(join(mountedHome, "etc/mesh/config"), { recursive: true })
    for (const file of ["key.pem", "cert-chain.pem", "root-cert.pem"])
      await writeFile(join(mountedHome, "etc/certs", file), await readFile(join(agentDir, "var/lib/mesh/data", file)))
    await writeFile(
      join(mountedHome, "etc/mesh/config/mesh"),
      `defaultConfig:\n  discoveryAddress: 127.0.0.1:${controlPlane.xds.port}\n  controlPlaneAuthPolicy: NONE\n`,
    )
    const mounted = startDaemon(
      "mesh-agent",
      ["proxy"],
      {
        DISABLE_PROXY: "true",
        FILE_MOUNTED_CERTS: "true",
        // no CA is reachable: the agent must not need one
        CA_ADDR: "127.0.0.1:1",
        POD_NAME: "sleep-2",
        POD_NAMESPACE: "default",
        SERVICE_ACCOUNT: "sleep",
        INSTANCE_IP: "127.0.0.1",
        PROXY_STATUS_PORT: String(await freePort()),
        STATUS_PORT: "0",
        MINIMUM_DRAIN_DURATION: "0s",
      },
      mountedHome,
    )
    try {
      await mounted.waitFor(/gRPC xDS bootstrap written/, 30_000)
      const bootstrapPath = join(mountedHome, "etc/mesh/proxy/grpc-bootstrap.json")
      const provider = JSON.parse(readFileSync(bootstrapPath, "utf8")).certificate_providers.default.config
      expect(provider.certificate_file).toBe(join(mountedHome, "etc/certs/cert-chain.pem"))
      expect(provider.private_key_file).toBe(join(mountedHome, "etc/certs/key.pem"))
      expect(provider.ca_certificate_file).toBe(join(mountedHome, "etc/certs/root-cert.pem"))
      const out = await clientRun(bootstrapPath)
      expect(out.results.every((r) => r.backend === "echo-v1")).toBe(true)
    } finally {
      await mounted.stop("SIGKILL")
    }
  }, 60_000)

  it("stops on SIGTERM, removing its sockets", async () => {
    const code = await agent.stop("SIGTERM")
    expect(code).toBe(0)
    await expect(readFile(join(agentDir, "etc/mesh/proxy/XDS"))).rejects.toThrow()
  })
})
