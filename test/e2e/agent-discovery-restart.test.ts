/**
 * End-to-end, the control plane going away under a proxyless workload: the built `mesh-discovery`
 * (config dir, Mock registry, self-signed CA, OIDC tokens) on fixed ports, the built
 * `mesh-agent proxy` (DISABLE_PROXY=true, xDS over mutual TLS on the secure port) for the client,
 * and a real @grpc/grpc-js-xds application using the agent's bootstrap that makes an RPC every
 * 20 ms. mesh-discovery is
 * SIGKILLed mid-stream; the agent reports the broken upstream; mesh-discovery restarts on the
 * same ports and working directory (so the CA keeps its root); the agent reconnects and replays
 * the client's subscriptions, a VirtualService edit made after the restart reaches the client's
 * existing channel, the agent's certificate renews from the restarted CA under the same root,
 * and not one RPC fails in the whole period.
 */
import { X509Certificate } from "node:crypto"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EchoBackend, startEchoBackend } from "../fixtures/xds/echo-backend.js"
import { execFileAsync, startIssuer, type TestIssuer } from "../layers/ca/helpers.js"
import { discoveryArgs } from "../support/discovery.js"
import { freePort, freePorts } from "../support/ports.js"
import { type Daemon, startDaemon } from "../support/processes.js"
import { pollUntil, type SteadyClient, startSteadyClient } from "../support/steady-client.js"

const HOST = "echo.demo.svc.cluster.local"
const TARGET = `${HOST}:80`
/**
 * The workload certificate's lifetime: its renewal (at half) must fall due during the outage,
 * and the outage (the renewal's retries, then a restart of several seconds on a busy machine)
 * must end well within the other half.
 */
const TTL_MS = 30_000

const services = (v1: number, v2: number) => `apiVersion: networking.mesh.io/v1
kind: ServiceEntry
metadata:
  name: echo
  namespace: demo
spec:
  hosts: [${HOST}]
  location: MESH_INTERNAL
  resolution: STATIC
  ports:
    - number: 80
      name: grpc
      protocol: GRPC
  endpoints:
    - address: 127.0.0.1
      ports: { grpc: ${v1} }
      labels: { app: echo, version: v1 }
    - address: 127.0.0.1
      ports: { grpc: ${v2} }
      labels: { app: echo, version: v2 }
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata:
  name: echo
  namespace: demo
spec:
  host: ${HOST}
  subsets:
    - name: v1
      labels: { version: v1 }
    - name: v2
      labels: { version: v2 }
`

const routeTo = (subset: string) => `apiVersion: networking.mesh.io/v1
kind: VirtualService
metadata:
  name: echo
  namespace: demo
spec:
  hosts: [${HOST}]
  http:
    - route:
        - destination:
            host: ${HOST}
            subset: ${subset}
`

let dir = ""
let discoveryDir = ""
let configDir = ""
let agentDir = ""
let issuer: TestIssuer
let v1: EchoBackend
let v2: EchoBackend
let grpcPort = 0
let securePort = 0
let statusPort = 0
let discovery: Daemon | undefined
let agent: Daemon | undefined
let client: SteadyClient | undefined

const logs = () =>
  `--- discovery\n${discovery?.output().slice(-3000)}\n--- agent\n${agent?.output().slice(-3000)}\n--- client\n${client?.output().slice(-2000)}`

/** Polls `check` until it returns a value (not undefined), within a time limit. */
const until = <A>(what: string, check: () => Promise<A | undefined>, ms = 20_000) => pollUntil(what, check, ms, logs)

const report = () => client!.report()

const agentMetric = async (name: string): Promise<number> => {
  const page = await (await fetch(`http://127.0.0.1:${statusPort}/stats/prometheus`)).text()
  return Number(page.match(new RegExp(`^${name} (\\S+)$`, "m"))?.[1] ?? "0")
}

const startDiscovery = () => {
  discovery = startDaemon(
    "mesh-discovery",
    discoveryArgs(configDir, {
      "--grpcAddr": `127.0.0.1:${grpcPort}`,
      "--secureGRPCAddr": `127.0.0.1:${securePort}`,
    }),
    {
      PILOT_DEBOUNCE_AFTER: "10ms",
      PILOT_DEBOUNCE_MAX: "200ms",
      TOKEN_ISSUER: issuer.issuer,
      // the restart must not have to wait for a TIME_WAIT port or a slow key
      MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE: "2048",
    },
    discoveryDir,
  )
  return Promise.all([
    discovery.waitFor(/ADS server listening on/, 30_000),
    // the CA and secure xDS share the secure gRPC listener
    discovery.waitFor(/secure gRPC listener on/, 30_000),
  ])
}

const caRoot = () => readFileSync(join(discoveryDir, "var/lib/meshd/ca/ca-cert.pem"), "utf8")
const certDir = () => join(agentDir, "var/lib/mesh/data")
const agentCert = () => readFileSync(join(certDir(), "cert-chain.pem"), "utf8")
const certNotAfter = () => Date.parse(new X509Certificate(agentCert()).validTo)

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "agent-discovery-restart-"))
  discoveryDir = join(dir, "discovery")
  configDir = join(dir, "mesh")
  agentDir = join(dir, "agent")
  for (const d of [discoveryDir, configDir, join(agentDir, "etc/mesh/config"), join(agentDir, "var/run/secrets/mesh")])
    mkdirSync(d, { recursive: true })
  ;[issuer, v1, v2] = await Promise.all([startIssuer(), startEchoBackend("echo-v1"), startEchoBackend("echo-v2")])
  writeFileSync(join(configDir, "services.yaml"), services(v1.port, v2.port))
  writeFileSync(join(configDir, "routing.yaml"), routeTo("v1"))
  ;[grpcPort, securePort, statusPort] = await freePorts(3)
  await startDiscovery()

  writeFileSync(join(agentDir, "var/run/secrets/mesh/root-cert.pem"), caRoot())
  writeFileSync(join(agentDir, "token"), await issuer.token({ sub: "system:serviceaccount:demo:sleep" }))
  writeFileSync(
    join(agentDir, "etc/mesh/config/mesh"),
    // The production path: xDS over TLS on the secure port, the agent authenticated by its token
    // and then its certificate (XDS_AUTH), as a proxy of its own namespace (identity check).
    `defaultConfig:\n  discoveryAddress: 127.0.0.1:${securePort}\n  controlPlaneAuthPolicy: MUTUAL_TLS\n`,
  )
  agent = startDaemon(
    "mesh-agent",
    ["proxy"],
    {
      DISABLE_PROXY: "true",
      CA_ADDR: `127.0.0.1:${securePort}`,
      MESHD_SAN: "meshd.mesh-system.svc",
      MESH_TOKEN_PATH: join(agentDir, "token"),
      POD_NAME: "sleep-1",
      POD_NAMESPACE: "demo",
      SERVICE_ACCOUNT: "sleep",
      INSTANCE_IP: "127.0.0.1",
      PROXY_STATUS_PORT: String(await freePort()),
      STATUS_PORT: String(statusPort),
      MINIMUM_DRAIN_DURATION: "0s",
      ECC_SIGNATURE_ALGORITHM: "ECDSA",
      // short-lived: the test lets the renewal fall due while the CA is down
      SECRET_TTL: `${TTL_MS / 1000}s`,
    },
    agentDir,
  )
  await agent.waitFor(/gRPC xDS bootstrap written/, 30_000)

  client = startSteadyClient(TARGET, { GRPC_XDS_BOOTSTRAP: join(agentDir, "etc/mesh/proxy/grpc-bootstrap.json") })
}, 60_000)

afterAll(async () => {
  if (client !== undefined && client.process.exitCode === null) client.process.kill("SIGKILL")
  await agent?.stop("SIGKILL")
  await discovery?.stop("SIGKILL")
  await Promise.all([v1, v2].map((b) => b?.close()))
  await issuer?.close()
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

describe("mesh-discovery killed and restarted under a proxyless agent", () => {
  it("fails no RPC; the agent reconnects, a later VirtualService edit reaches the client, the CA root stays", async () => {
    const rootBefore = caRoot()
    const steady = await until("RPCs answered by echo-v1", async () => {
      const r = await report()
      return (r.counts["echo-v1"] ?? 0) >= 20 ? r : undefined
    })
    expect(steady.failureCount).toBe(0)

    // mid-stream, shortly before the workload certificate's renewal (half of its lifetime) falls
    // due: SIGKILL (no goodbye on the streams), the agent notices
    // (read again while waiting: a renewal that happened meanwhile moves the due time on)
    let notAfter = 0
    await until(
      "the renewal about to fall due",
      async () => {
        notAfter = certNotAfter()
        return Date.now() >= notAfter - TTL_MS / 2 - 1500 ? true : undefined
      },
      TTL_MS,
    )
    const certAtKill = agentCert()
    const terminationsBefore = await agentMetric("meshd_connection_terminations")
    const killedAt = Date.now()
    const outputAtKill = agent!.output().length
    await discovery!.stop("SIGKILL")
    await until("the agent counting the broken upstream", async () =>
      (await agentMetric("meshd_connection_terminations")) > terminationsBefore ? true : undefined,
    )
    await agent!.waitFor(/upstream 127\.0\.0\.1:\d+ connection failed/, 10_000)
    // the renewal falls due while the CA is away: retried with backoff, the held certificate kept
    await agent!.waitFor(/certificate request for \S+ failed \(will retry\)/, 15_000)
    expect(agentCert()).toBe(certAtKill)
    const during = await report()
    expect(during.total).toBeGreaterThan(steady.total)

    // back on the same ports and working directory
    const reconnectsBefore = (agent!.output().match(/upstream \S+ reconnected/g) ?? []).length
    const restartBegan = Date.now()
    await startDiscovery()
    const restartedAt = Date.now()
    const startupMs = restartedAt - restartBegan
    expect(caRoot()).toBe(rootBefore)
    await until("the agent reconnected upstream", async () =>
      (agent!.output().match(/upstream \S+ reconnected/g) ?? []).length > reconnectsBefore ? true : undefined,
    )

    // a change made after the restart reaches the client's existing channel
    const editedAt = Date.now()
    writeFileSync(join(configDir, "routing.yaml"), routeTo("v2"))
    const beforeV2 = (await report()).counts["echo-v2"] ?? 0
    await until(
      "RPCs answered by echo-v2",
      async () => (((await report()).counts["echo-v2"] ?? 0) >= beforeV2 + 20 ? true : undefined),
      15_000,
    )

    // the workload certificate renewed from the restarted CA, under the same root; in time,
    // unless the restart itself took (nearly) all of the old certificate's remaining life
    const renewed = await until("a renewed workload certificate", async () => {
      const line = agent!
        .output()
        .slice(outputAtKill)
        .match(/^(\S+)\s+info\s+cache\s+workload certificate for \S+ renewed/m)
      return line !== null && agentCert() !== certAtKill ? Date.parse(line[1]!) : undefined
    })
    const margin = notAfter - renewed
    if (restartedAt < notAfter - 2000) expect(margin, agent!.output()).toBeGreaterThan(0)
    expect(readFileSync(join(certDir(), "root-cert.pem"), "utf8")).toBe(rootBefore)
    const rootFile = join(dir, "root-before.pem")
    writeFileSync(rootFile, rootBefore)
    const verify = await execFileAsync("openssl", ["verify", "-CAfile", rootFile, join(certDir(), "cert-chain.pem")])
    expect(verify.stdout).toContain(": OK")

    const final = await report()
    console.log(
      `discovery restart: ${final.total} RPCs, ${final.failureCount} failed, down ${restartedAt - killedAt} ms (restart ${startupMs} ms), ` +
        `certificate renewed ${margin} ms before the old one expired, ` +
        `states ${JSON.stringify(final.states.map((s) => [s.state, s.at - editedAt]))} (ms after the edit), counts ${JSON.stringify(final.counts)}`,
    )
    expect(final.failures, logs()).toEqual([])
    expect(final.failureCount).toBe(0)
    // the channel stayed READY through the outage; moving the route to v2 (another cluster, a
    // new subchannel) may pass through CONNECTING
    expect(final.states.filter((s) => s.at < editedAt)).toEqual([])
    expect(final.total).toBeGreaterThan(100)
  }, 60_000)
})
