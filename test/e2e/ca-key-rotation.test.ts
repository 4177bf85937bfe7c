/**
 * End to end, root key rotation without downtime (issue 43) on the built binaries: the built
 * `mesh-discovery` (config dir, self-signed CA, OIDC tokens, short rotation timings), two built
 * `mesh-agent proxy` processes (DISABLE_PROXY=true, xDS over mutual TLS on the secure port) for a
 * proxyless @grpc/grpc-js-xds XdsServer (`echo`) and a proxyless client (`sleep`) making an mTLS
 * RPC every 20 ms (STRICT PeerAuthentication, ISTIO_MUTUAL DestinationRule).
 *
 * `meshctl admin ca rotate-key` starts the rotation; the test then follows the three phases on
 * `/debug/ca_rotation` and checks every delivery point it can reach: the agents' root files
 * (the proxyless certificate files), a CreateCertificate response, the serving chain of the
 * secure gRPC listener. During the overlap both roots are there and a workload certificate from
 * the old key verifies against the bundle while one from a root outside it does not; after it,
 * only the new root is left. Not one RPC fails. Last, a third trust bundle stream, past
 * MESHCA_TRUST_BUNDLE_MAX_WATCHERS=2, is refused with RESOURCE_EXHAUSTED.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as grpc from "@grpc/grpc-js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { KeyRotationStatus } from "../../src/services/ca/ca.js"
import { parseCertificates } from "../../src/services/ca/x509.js"
import {
  createCertificateCall,
  execFileAsync,
  makeCsr,
  openTrustBundleStream,
  startIssuer,
  type TestIssuer,
} from "../layers/ca/helpers.js"
import { discoveryArgs } from "../support/discovery.js"
import { opensslConnect, opensslServerCert } from "../support/openssl.js"
import { freePort, freePorts } from "../support/ports.js"
import { type Daemon, ROOT, run, startDaemon } from "../support/processes.js"
import { pollUntil, type SteadyClient, type SteadyReport, startSteadyClient } from "../support/steady-client.js"

const HOST = "echo.demo.svc.cluster.local"
const TARGET = `${HOST}:80`
const SERVER_NAME = "meshd.mesh-system.svc"
const SLEEP_ID = "spiffe://cluster.local/ns/demo/sa/sleep"
/** Workload certificates live at most this long: phase (c) ends this long after the switch. */
const MAX_TTL_S = 6

const config = (echoPort: number) => `apiVersion: networking.mesh.io/v1
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
      ports: { grpc: ${echoPort} }
      serviceAccount: echo
      labels: { app: echo }
---
apiVersion: networking.mesh.io/v1
kind: DestinationRule
metadata:
  name: echo
  namespace: demo
spec:
  host: ${HOST}
  trafficPolicy:
    tls: { mode: ISTIO_MUTUAL }
---
apiVersion: security.mesh.io/v1
kind: PeerAuthentication
metadata:
  name: default
  namespace: mesh-system
spec:
  mtls: { mode: STRICT }
`

let dir = ""
let discoveryDir = ""
let issuer: TestIssuer
let securePort = 0
let monitoringPort = 0
let grpcPort = 0
let echoPort = 0
let discovery: Daemon | undefined
const agents: Array<Daemon> = []
let server: ChildProcessWithoutNullStreams | undefined
let serverOutput = ""
let client: SteadyClient | undefined
let fileId = 0

const logs = () =>
  [
    `--- discovery\n${discovery?.output().slice(-4000)}`,
    ...agents.map((a, i) => `--- agent ${i}\n${a.output().slice(-2500)}`),
    `--- server\n${serverOutput.slice(-1500)}`,
    `--- client\n${client?.output().slice(-1500)}`,
  ].join("\n")

/** Waits (bounded, polling) for `check` to return a value; the error carries the processes' logs. */
const until = <A>(what: string, check: () => Promise<A | undefined>, ms = 30_000) =>
  pollUntil(what, check, ms, logs, 50)

const report = () => client!.report()

const rotationStatus = async (): Promise<KeyRotationStatus> =>
  (await fetch(`http://127.0.0.1:${monitoringPort}/debug/ca_rotation`)).json() as Promise<KeyRotationStatus>

const caRoot = () => readFileSync(join(discoveryDir, "var/lib/meshd/ca/ca-cert.pem"), "utf8")
const serials = (pem: string) => parseCertificates(pem).map((c) => c.serialNumber)

const startAgent = async (name: string, serviceAccount: string) => {
  const home = join(dir, name)
  for (const d of ["etc/mesh/config", "var/run/secrets/mesh"]) mkdirSync(join(home, d), { recursive: true })
  writeFileSync(join(home, "resolv.conf"), "nameserver 127.0.0.1\n")
  writeFileSync(join(home, "var/run/secrets/mesh/root-cert.pem"), caRoot())
  writeFileSync(join(home, "token"), await issuer.token({ sub: `system:serviceaccount:demo:${serviceAccount}` }))
  writeFileSync(
    join(home, "etc/mesh/config/mesh"),
    `defaultConfig:\n  discoveryAddress: 127.0.0.1:${securePort}\n  controlPlaneAuthPolicy: MUTUAL_TLS\n`,
  )
  const agent = startDaemon(
    "mesh-agent",
    ["proxy"],
    {
      DISABLE_PROXY: "true",
      CA_ADDR: `127.0.0.1:${securePort}`,
      MESHD_SAN: SERVER_NAME,
      MESH_TOKEN_PATH: join(home, "token"),
      POD_NAME: `${name}-1`,
      POD_NAMESPACE: "demo",
      SERVICE_ACCOUNT: serviceAccount,
      INSTANCE_IP: "127.0.0.1",
      PROXY_STATUS_PORT: String(await freePort()),
      STATUS_PORT: "0",
      MINIMUM_DRAIN_DURATION: "0s",
      ECC_SIGNATURE_ALGORITHM: "ECDSA",
      SECRET_TTL: "4s",
      // The DNS proxy stays off; should it start, it must never reach the sandbox resolver.
      DNS_PROXY_RESOLV_CONF: join(home, "resolv.conf"),
    },
    home,
  )
  agents.push(agent)
  await agent.waitFor(/gRPC xDS bootstrap written/, 30_000)
  return { home, rootFile: join(home, "var/lib/mesh/data/root-cert.pem") }
}

let echo: Awaited<ReturnType<typeof startAgent>>
let sleep: Awaited<ReturnType<typeof startAgent>>

/** The XdsServer application with the echo agent's bootstrap; resolves once it serves. */
const startServer = (bootstrap: string) =>
  new Promise<void>((resolve, reject) => {
    server = spawn(process.execPath, [join(ROOT, "test/fixtures/agent/xds-echo-server.mjs"), String(echoPort)], {
      cwd: ROOT,
      env: { ...process.env, GRPC_XDS_BOOTSTRAP: bootstrap, GRPC_XDS_EXPERIMENTAL_RBAC: "true" },
      stdio: ["pipe", "pipe", "pipe"],
    })
    const timer = setTimeout(() => reject(new Error(`XdsServer not serving:\n${serverOutput}\n${logs()}`)), 30_000)
    const append = (chunk: Buffer) => {
      serverOutput += chunk.toString()
      if (/serving on \d+/.test(serverOutput)) {
        clearTimeout(timer)
        resolve()
      }
    }
    server.stdout.on("data", append)
    server.stderr.on("data", append)
  })

/** A workload certificate (leaf PEM) for `ns`'s `sleep` and the chain's last element (the bundle). */
const issueDirect = async (rootPem: string) => {
  const { csrPem } = await makeCsr([SLEEP_ID])
  const token = await issuer.token({ sub: "system:serviceaccount:demo:sleep" })
  const result = await createCertificateCall(securePort, rootPem, { csr: csrPem }, { token })
  if (result.error !== undefined) throw result.error
  const chain = result.chain!
  return { leaf: chain[0]!, bundle: chain[chain.length - 1]! }
}

/**
 * The serials of the certificates the secure gRPC listener presents after its leaf. The listener
 * ends a connection that speaks no HTTP/2, so s_client exits non-zero after printing the chain.
 */
const servingChainRoots = () => {
  let out: string
  try {
    out = opensslConnect(securePort, SERVER_NAME, ["-showcerts"])
  } catch (e) {
    out = String((e as { stdout?: Buffer }).stdout ?? "")
  }
  return serials(out).slice(1)
}

/** Progress lines, so that a run cut short by the time limit says how far it got. */
const step = (what: string) => console.log(`${new Date().toISOString()} ca-key-rotation: ${what}`)

/**
 * `openssl verify` of a leaf against a bundle file, at a second into the leaf's lifetime: the
 * workload certificates here live seconds, and what is checked is whose key signed them.
 */
const verify = async (bundleFile: string, leafPem: string) => {
  const leaf = join(dir, `leaf-${fileId++}.pem`)
  writeFileSync(leaf, leafPem)
  const at = Math.floor(parseCertificates(leafPem)[0]!.notBefore.getTime() / 1000) + 1
  return execFileAsync("openssl", ["verify", "-attime", String(at), "-CAfile", bundleFile, leaf]).then(
    (r) => r.stdout,
    (e: { stdout: string; stderr: string }) => `${e.stdout}${e.stderr}`,
  )
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "ca-key-rotation-"))
  discoveryDir = join(dir, "discovery")
  const configDir = join(dir, "mesh")
  for (const d of [discoveryDir, configDir]) mkdirSync(d, { recursive: true })
  issuer = await startIssuer()
  ;[grpcPort, securePort, monitoringPort, echoPort] = await freePorts(4)
  writeFileSync(join(configDir, "mesh.yaml"), config(echoPort))
  discovery = startDaemon(
    "mesh-discovery",
    discoveryArgs(configDir, {
      "--grpcAddr": `127.0.0.1:${grpcPort}`,
      "--secureGRPCAddr": `127.0.0.1:${securePort}`,
      "--monitoringAddr": `127.0.0.1:${monitoringPort}`,
    }),
    {
      PILOT_DEBOUNCE_AFTER: "10ms",
      PILOT_DEBOUNCE_MAX: "200ms",
      TOKEN_ISSUER: issuer.issuer,
      MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE: "2048",
      DEFAULT_WORKLOAD_CERT_TTL: "4s",
      MAX_WORKLOAD_CERT_TTL: `${MAX_TTL_S}s`,
      MESHCA_KEY_ROTATION_CHECK_INTERVAL: "250ms",
      // above the agents' file_watcher refresh (1s at SECRET_TTL 4s): the applications have reread the root file
      MESHCA_KEY_ROTATION_PUBLISH_MIN_WAIT: "2s",
      MESHCA_KEY_ROTATION_PUBLISH_TIMEOUT: "60s",
      // the two agents' streams fill it: a third is refused (the last case)
      MESHCA_TRUST_BUNDLE_MAX_WATCHERS: "2",
    },
    discoveryDir,
  )
  await Promise.all([
    discovery.waitFor(/ADS server listening on/, 30_000),
    discovery.waitFor(/secure gRPC listener on/, 30_000),
  ])
  echo = await startAgent("echo", "echo")
  await startServer(join(echo.home, "etc/mesh/proxy/grpc-bootstrap.json"))
  sleep = await startAgent("sleep", "sleep")
  client = startSteadyClient(TARGET, {
    GRPC_XDS_BOOTSTRAP: join(sleep.home, "etc/mesh/proxy/grpc-bootstrap.json"),
    XDS_CREDENTIALS: "1",
  })
}, 90_000)

afterAll(async () => {
  for (const p of [client?.process, server]) if (p !== undefined && p.exitCode === null) p.kill("SIGKILL")
  for (const a of agents) await a.stop("SIGKILL")
  await discovery?.stop("SIGKILL")
  await issuer?.close()
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

describe("root key rotation under proxyless mTLS workloads", () => {
  it("completes the three phases with zero failed RPCs; both roots are delivered during the overlap, one after", async () => {
    const oldRoot = caRoot()
    const [oldSerial] = serials(oldRoot)
    let last: SteadyReport | undefined
    const steady = await until("mTLS RPCs answered", async () => {
      last = await report()
      return last.total >= 20 ? last : undefined
    }).catch((e: Error) => {
      throw new Error(`${e.message}\nlast report: ${JSON.stringify(last)}`)
    })
    expect(steady.failureCount).toBe(0)
    // The echo server saw the client's identity: the RPCs are mutual TLS.
    expect(Object.keys(steady.counts)).toEqual([`URI:${SLEEP_ID}`])
    await until("both agents watching the trust bundle", async () => {
      const s = await rotationStatus()
      return s.watchers.total === 2 && s.watchers.current === 2 ? s : undefined
    })
    step("steady mTLS RPCs, both agents watching the bundle")
    const oldLeaf = (await issueDirect(oldRoot)).leaf

    const rotated = await run("meshctl", [
      "admin",
      "ca",
      "rotate-key",
      "--xds-address",
      `http://127.0.0.1:${monitoringPort}`,
    ])
    expect(rotated.code, rotated.stderr).toBe(0)
    const begun = JSON.parse(rotated.stdout) as KeyRotationStatus
    expect(begun.phase).toBe("publishing")
    const newSerial = begun.pending!.serial
    // Phase times from when the server published the bundle (meshctl's own start-up aside).
    const started = Date.parse(begun.pending!.publishedAt)
    step(`rotation started: ${oldSerial} -> ${newSerial}`)
    expect(newSerial).not.toBe(oldSerial)
    const both = [oldSerial, newSerial].sort()

    // (a) every agent acknowledges a bundle of both roots; the old key still signs meanwhile.
    const acknowledged = await until("agents acknowledging the two-root bundle", async () => {
      const s = await rotationStatus()
      return s.phase === "publishing" && s.bundle.roots === 2 && s.watchers.current === 2 ? s : undefined
    })
    const publishedMs = Date.now() - started
    step("phase (a): both agents acknowledged the two-root bundle")
    for (const a of [echo, sleep]) expect(serials(readFileSync(a.rootFile, "utf8")).sort()).toEqual(both)
    expect(acknowledged.root.serial).toBe(oldSerial)

    // (b) the new key signs; the old root stays in the bundle.
    await until("the new key signing", async () => {
      const s = await rotationStatus()
      return s.phase === "retaining" && s.root.serial === newSerial ? s : undefined
    })
    const switchedMs = Date.now() - started
    step("phase (b): the new key signs")
    const overlap = await issueDirect(oldRoot + readFileSync(sleep.rootFile, "utf8"))
    expect(serials(overlap.bundle).sort()).toEqual(both)
    expect(servingChainRoots()).toEqual(expect.arrayContaining(both))
    for (const a of [echo, sleep]) expect(serials(readFileSync(a.rootFile, "utf8")).sort()).toEqual(both)
    // A certificate of the old key verifies against the bundle; one from a root outside it does not.
    expect(await verify(sleep.rootFile, oldLeaf)).toContain("OK")
    expect(await verify(sleep.rootFile, overlap.leaf)).toContain("OK")
    const foreign = opensslServerCert(dir, "foreign", `URI:${SLEEP_ID}`)
    expect(await verify(sleep.rootFile, foreign.certPem)).not.toContain(": OK")

    // (c) MAX_WORKLOAD_CERT_TTL after the switch, the old root leaves every delivery point.
    await until(
      "the old root retired",
      async () => {
        const s = await rotationStatus()
        return s.phase === "idle" && s.bundle.roots === 1 ? s : undefined
      },
      (MAX_TTL_S + 20) * 1000,
    )
    const retiredMs = Date.now() - started
    step("phase (c): the old root left the bundle")
    await until("the agents' root files holding only the new root", async () =>
      [echo, sleep].every((a) => serials(readFileSync(a.rootFile, "utf8")).join() === newSerial) ? true : undefined,
    )
    const after = await issueDirect(readFileSync(sleep.rootFile, "utf8"))
    expect(serials(after.bundle)).toEqual([newSerial])
    expect(
      await until("the serving chain without the old root", async () => {
        const roots = servingChainRoots()
        return roots.includes(oldSerial!) ? undefined : roots
      }),
    ).toEqual([newSerial])
    expect(await verify(sleep.rootFile, oldLeaf)).not.toContain(": OK")
    expect(await verify(sleep.rootFile, after.leaf)).toContain("OK")

    // A few more RPCs under the new root alone, then the count: not one failed.
    const before = await report()
    const final = await until("RPCs after the rotation", async () => {
      const r = await report()
      return r.total >= before.total + 20 ? r : undefined
    })
    console.log(
      `key rotation: published+acknowledged ${publishedMs} ms, switched ${switchedMs} ms, old root retired ${retiredMs} ms after the bundle was published; ${final.total} mTLS RPCs, ${final.failureCount} failed`,
    )
    expect(final.failures).toEqual([])
    expect(final.failureCount).toBe(0)
    // meshctl's status over xDS (plaintext, from this host) says the same as the page.
    const shown = await run("meshctl", [
      "admin",
      "ca",
      "status",
      "--xds-address",
      `127.0.0.1:${grpcPort}`,
      "--plaintext",
    ])
    expect(shown.code, shown.stderr).toBe(0)
    expect((JSON.parse(shown.stdout) as KeyRotationStatus).root.serial).toBe(newSerial)
  }, 120_000)

  it("refuses a trust bundle stream past MESHCA_TRUST_BUNDLE_MAX_WATCHERS with RESOURCE_EXHAUSTED", async () => {
    const stream = openTrustBundleStream(
      securePort,
      readFileSync(sleep.rootFile, "utf8"),
      await issuer.token({ sub: "system:serviceaccount:demo:sleep" }),
    )
    const status = await stream.status
    stream.close()
    expect(status.code).toBe(grpc.status.RESOURCE_EXHAUSTED)
    expect(status.details).toContain("MESHCA_TRUST_BUNDLE_MAX_WATCHERS")
    // The agents' own streams are untouched.
    expect((await rotationStatus()).watchers.total).toBe(2)
  })
})
