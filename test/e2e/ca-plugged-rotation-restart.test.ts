/**
 * End to end, a plugged-in CA replaced under a different root (issue 43 point 4) with the built
 * `mesh-discovery` SIGKILLed and started again in the middle of the overlap, twice:
 *
 * - ROOT_CA_DIR (`./etc/cacerts`) holds an openssl intermediate `int-a` under root A; a trust
 *   bundle stream that never acknowledges (an agent that has not applied the bundle) holds
 *   phase (a) once `int-b` under root B replaces it;
 * - killed in phase (a), the restarted process resumes it: root B published since the original
 *   time, `int-a` (whose files are gone from ROOT_CA_DIR) still signing, both roots in every
 *   CreateCertificate response; with no agent left lagging it switches to `int-b` after
 *   MESHCA_KEY_ROTATION_PUBLISH_MIN_WAIT counted from the restart;
 * - killed in phase (c), the restarted process still trusts root A until the same end date, then
 *   drops it; the stored state (`var/lib/meshd/ca/plugged-rotation.json`) is gone.
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
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
import { opensslIntermediate } from "../layers/ca/orchestrator/helpers.js"
import { discoveryArgs } from "../support/discovery.js"
import { freePorts } from "../support/ports.js"
import { type Daemon, startDaemon } from "../support/processes.js"
import { pollUntil } from "../support/steady-client.js"

const SLEEP_ID = "spiffe://cluster.local/ns/demo/sa/sleep"
/** Longer than a restart takes on a loaded machine (10–15 s seen), so phase (c) outlasts one. */
const MAX_TTL_S = 40
/**
 * Counted from the restarted CA's start: long enough for the page to answer first (the CA starts
 * a few seconds before the listeners on a loaded machine), so phase (a) is seen resumed.
 */
const MIN_WAIT_MS = 8000

let dir = ""
let home = ""
let issuer: TestIssuer
let securePort = 0
let monitoringPort = 0
let grpcPort = 0
let discovery: Daemon | undefined
const outputs: Array<string> = []
let a: Record<string, string>
let b: Record<string, string>

const logs = () => [...outputs, discovery?.output() ?? ""].join("\n--- restarted\n").slice(-6000)
const until = <A>(what: string, check: () => Promise<A | undefined>, ms = 30_000) =>
  pollUntil(what, check, ms, logs, 50)

const start = async () => {
  if (discovery !== undefined) outputs.push(discovery.output())
  discovery = startDaemon(
    "mesh-discovery",
    discoveryArgs(join(dir, "mesh"), {
      "--grpcAddr": `127.0.0.1:${grpcPort}`,
      "--secureGRPCAddr": `127.0.0.1:${securePort}`,
      "--monitoringAddr": `127.0.0.1:${monitoringPort}`,
    }),
    {
      TOKEN_ISSUER: issuer.issuer,
      DEFAULT_WORKLOAD_CERT_TTL: "4s",
      MAX_WORKLOAD_CERT_TTL: `${MAX_TTL_S}s`,
      MESHCA_KEY_ROTATION_CHECK_INTERVAL: "100ms",
      MESHCA_KEY_ROTATION_PUBLISH_MIN_WAIT: `${MIN_WAIT_MS}ms`,
      MESHCA_KEY_ROTATION_PUBLISH_TIMEOUT: "120s",
    },
    home,
  )
  await discovery.waitFor(/secure gRPC listener on/, 30_000)
  // The debug pages are served by the monitoring listener, which may open a moment later.
  await until("the monitoring listener", () => rotationStatus().catch(() => undefined))
}

/** SIGKILL: nothing is flushed or cleaned up on the way out. */
const kill = async () => {
  await discovery!.stop("SIGKILL")
}

const rotationStatus = async (): Promise<KeyRotationStatus> =>
  (await fetch(`http://127.0.0.1:${monitoringPort}/debug/ca_rotation`)).json() as Promise<KeyRotationStatus>

const subject = (pem: string) => parseCertificates(pem)[0]!.subject
const serials = (pem: string) => parseCertificates(pem).map((c) => c.serialNumber)

/** A workload certificate over the secure port: [leaf, signing CA, ..., bundle]. */
const issueDirect = async () => {
  const { csrPem } = await makeCsr([SLEEP_ID])
  const token = await issuer.token({ sub: "system:serviceaccount:demo:sleep" })
  // The serving certificate is issued by whichever CA signs: trust both roots.
  const result = await createCertificateCall(
    securePort,
    a["root-cert.pem"]! + b["root-cert.pem"]!,
    { csr: csrPem },
    { token },
  )
  if (result.error !== undefined) throw result.error
  const chain = result.chain!
  return { chain, signer: subject(chain[1]!), bundle: chain[chain.length - 1]! }
}

/** Writes a CA into ROOT_CA_DIR file by file, each atomically, the key and chain before the cert. */
const plug = (ca: Record<string, string>) => {
  const target = join(home, "etc/cacerts")
  mkdirSync(target, { recursive: true })
  for (const file of ["ca-key.pem", "cert-chain.pem", "root-cert.pem", "ca-cert.pem"]) {
    writeFileSync(join(target, `.${file}.tmp`), ca[file]!)
    renameSync(join(target, `.${file}.tmp`), join(target, file))
  }
}

/** `openssl verify` of [leaf, intermediate] against a bundle, a second into the leaf's lifetime. */
const verify = async (bundle: string, chain: ReadonlyArray<string>) => {
  const n = Math.random().toString(36).slice(2)
  const [leaf, untrusted, ca] = [`leaf-${n}.pem`, `int-${n}.pem`, `bundle-${n}.pem`].map((f) => join(dir, f))
  writeFileSync(leaf!, chain[0]!)
  writeFileSync(untrusted!, chain[1]!)
  writeFileSync(ca!, bundle)
  const at = Math.floor(parseCertificates(chain[0]!)[0]!.notBefore.getTime() / 1000) + 1
  return execFileAsync("openssl", [
    "verify",
    "-attime",
    String(at),
    "-CAfile",
    ca!,
    "-untrusted",
    untrusted!,
    leaf!,
  ]).then(
    (r) => r.stdout,
    (e: { stdout: string; stderr: string }) => `${e.stdout}${e.stderr}`,
  )
}

const step = (what: string) => console.log(`${new Date().toISOString()} ca-plugged-rotation-restart: ${what}`)

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "ca-plugged-restart-"))
  home = join(dir, "discovery")
  mkdirSync(join(dir, "mesh"), { recursive: true })
  mkdirSync(join(dir, "b"), { recursive: true })
  ;[a, b] = await Promise.all([opensslIntermediate(dir, "int-a"), opensslIntermediate(join(dir, "b"), "int-b")])
  plug(a)
  issuer = await startIssuer()
  ;[grpcPort, securePort, monitoringPort] = await freePorts(3)
  await start()
}, 60_000)

afterAll(async () => {
  await discovery?.stop("SIGKILL")
  await issuer?.close()
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

describe("plugged-in CA change of root across SIGKILL restarts", () => {
  it("resumes phase (a) with the previous CA signing, and phase (c) with the old root trusted", async () => {
    const [rootA] = serials(a["root-cert.pem"]!)
    const [rootB] = serials(b["root-cert.pem"]!)
    const stateFile = join(home, "var/lib/meshd/ca/plugged-rotation.json")
    const idle = await rotationStatus()
    expect(idle.phase).toBe("idle")
    expect(idle.source).toBe("plugged")
    expect((await issueDirect()).signer).toBe("O=test, CN=int-a")
    const oldChain = (await issueDirect()).chain

    // (a) int-b replaces int-a; a stream that never acknowledges holds the overlap.
    const stream = openTrustBundleStream(
      securePort,
      a["root-cert.pem"]!,
      await issuer.token({ sub: "system:serviceaccount:demo:sleep" }),
    )
    await until("the lagging stream counted", async () =>
      (await rotationStatus()).watchers.total === 1 ? true : undefined,
    )
    plug(b)
    const publishing = await until("root B published", async () => {
      const s = await rotationStatus()
      return s.phase === "publishing" && s.bundle.roots === 2 ? s : undefined
    })
    const publishedAt = publishing.pending!.publishedAt
    expect(publishing.pending!.serial).toBe(rootB)
    expect(publishing.root.serial).toBe(rootA)
    expect(publishing.watchers.lagging).toHaveLength(1)
    const during = await issueDirect()
    expect(during.signer).toBe("O=test, CN=int-a")
    expect(serials(during.bundle).sort()).toEqual([rootA, rootB].sort())
    expect(existsSync(stateFile)).toBe(true)
    step("phase (a): root B published, int-a signing; SIGKILL")

    await kill()
    stream.close()
    const restartedMs = Date.now()
    await start()
    await discovery!.waitFor(/plugged-in CA: resumed publishing root/)
    const resumed = await rotationStatus()
    expect(resumed.phase).toBe("publishing")
    expect(resumed.root.serial).toBe(rootA)
    expect(resumed.pending?.serial).toBe(rootB)
    expect(resumed.pending?.publishedAt).toBe(publishedAt)
    // Whichever way phase (a) stands when the request arrives, both roots are delivered.
    const afterRestart = await issueDirect()
    expect(serials(afterRestart.bundle).sort()).toEqual([rootA, rootB].sort())
    const resumedMs = Date.now() - restartedMs
    step(`restarted in phase (a) after ${resumedMs} ms: resumed publishing root B`)

    // (b) nothing lags now: int-b signs once the minimum wait has passed since the restart.
    const switched = await until("int-b signing", async () => {
      const s = await rotationStatus()
      return s.phase === "retaining" && s.root.serial === rootB ? s : undefined
    })
    const switchedMs = Date.now() - restartedMs
    expect(switchedMs).toBeGreaterThanOrEqual(MIN_WAIT_MS)
    const retainUntil = switched.retired.find((r) => r.serial === rootA)?.retainUntil
    expect(retainUntil).toBeDefined()
    const overlap = await issueDirect()
    expect(overlap.signer).toBe("O=test, CN=int-b")
    expect(serials(overlap.bundle).sort()).toEqual([rootA, rootB].sort())
    // int-a's certificate and int-b's both verify against the bundle of the overlap.
    expect(await verify(overlap.bundle, oldChain)).toContain("OK")
    expect(await verify(overlap.bundle, overlap.chain)).toContain("OK")
    step(`phase (b): int-b signs ${switchedMs} ms after the restart; SIGKILL in phase (c)`)

    await kill()
    await start()
    const retaining = await rotationStatus()
    expect(retaining.phase).toBe("retaining")
    expect(retaining.root.serial).toBe(rootB)
    expect(retaining.retired).toEqual([{ serial: rootA, retainUntil }])
    expect(serials((await issueDirect()).bundle).sort()).toEqual([rootA, rootB].sort())

    // (c) at the stored end date root A leaves the bundle, and the stored state goes.
    await until(
      "root A retired",
      async () => {
        const s = await rotationStatus()
        return s.phase === "idle" && s.bundle.roots === 1 ? s : undefined
      },
      (MAX_TTL_S + 20) * 1000,
    )
    const retiredLateMs = Date.now() - Date.parse(retainUntil!)
    const after = await issueDirect()
    expect(serials(after.bundle)).toEqual([rootB])
    expect(await verify(after.bundle, oldChain)).not.toContain(": OK")
    expect(existsSync(stateFile)).toBe(false)
    console.log(
      `plugged-in CA restart: resumed ${resumedMs} ms after the SIGKILL in phase (a), int-b signing ${switchedMs} ms after it (min wait ${MIN_WAIT_MS} ms), root A dropped ${retiredLateMs} ms after its stored end date across a second SIGKILL`,
    )
  }, 180_000)
})
