/**
 * Root key rotation (issue 43) on the real orchestrator API server: the orchestrator delivery
 * points. The built `mesh-discovery` (admin kubeconfig, self-signed CA, short rotation timings)
 * keeps the `mesh-ca-root-cert` ConfigMap of every namespace and the `caBundle` of the injection
 * and validation webhook configurations; a key rotation started with POST /debug/ca_rotate_key
 * must show both roots in all of them during the overlap — phase (a), held here by a trust bundle
 * stream (a real bound token of a ServiceAccount, reviewed by the API server) that never
 * acknowledges, and phase (b) — and only the new root after phase (c). (The webhook caBundle keeps
 * the CAs of the served chain, and a CA-issued serving chain ends with the whole trust bundle, as
 * every CreateCertificate response does: both roots during the overlap.)
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { KeyRotationStatus } from "../../src/services/ca/ca.js"
import { parseCertificates } from "../../src/services/ca/x509.js"
import { openTrustBundleStream } from "../layers/ca/helpers.js"
import { discoveryArgs } from "../support/discovery.js"
import { freePorts } from "../support/ports.js"
import { type Daemon, startDaemon } from "../support/processes.js"
import { realOrchestratorPerFile } from "../support/real-orchestrator.js"
import { pollUntil } from "../support/steady-client.js"

const real = realOrchestratorPerFile({ beforeAll, afterAll })
const MESH_NS = "mesh-system"
const MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
const VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
const INJECTOR = "mesh-sidecar-injector"
const VALIDATOR = "mesh-validator-mesh-system"
/** Phase (b) and (c) together last this long after the switch. */
const MAX_TTL_S = 15

let meshd: Daemon | undefined
let dir = ""
let monitoringPort = 0
let securePort = 0
let apps = ""
let other = ""

const until = <A>(what: string, check: () => Promise<A | undefined>, ms = 30_000) =>
  pollUntil(what, check, ms, () => `${meshd?.output().slice(-5000)}`, 100)

const serials = (pem: string) => parseCertificates(pem).map((c) => c.serialNumber)

const rotationStatus = async (): Promise<KeyRotationStatus> =>
  (await fetch(`http://127.0.0.1:${monitoringPort}/debug/ca_rotation`)).json() as Promise<KeyRotationStatus>

/** The roots in each namespace's `mesh-ca-root-cert` ConfigMap (serials, in order). */
const configMapRoots = async () => {
  const out: Record<string, Array<string>> = {}
  for (const ns of [apps, other]) {
    const cm = await real.get().api("GET", `/api/v1/namespaces/${ns}/configmaps/mesh-ca-root-cert`)
    out[ns] = cm.status === 200 ? serials((cm.body.data?.["root-cert.pem"] as string | undefined) ?? "") : []
  }
  return out
}

/** The roots in each webhook configuration's caBundle (serials; every webhook of one must agree). */
const webhookRoots = async () => {
  const out: Record<string, Array<string>> = {}
  for (const [collection, name] of [
    [MUTATING, INJECTOR],
    [VALIDATING, VALIDATOR],
  ] as const) {
    const config = await real.get().ok("GET", `${collection}/${name}`)
    const bundles = new Set(
      (config.webhooks as Array<{ clientConfig: { caBundle?: string } }>).map((w) => w.clientConfig.caBundle ?? ""),
    )
    out[name] = bundles.size === 1 ? serials(Buffer.from([...bundles][0]!, "base64").toString()) : ["disagree"]
  }
  return out
}

/** Every delivery point holding exactly `expected` (serials, in order), or undefined. */
const everywhere = async (expected: ReadonlyArray<string>) => {
  const points = { ...(await configMapRoots()), ...(await webhookRoots()) }
  return Object.values(points).every((roots) => roots.join() === expected.join()) ? points : undefined
}

const webhook = (name: string) => ({
  name,
  clientConfig: { url: `https://localhost:1/${name}` },
  // Nothing here matches (no such group is served): the API server never calls it.
  rules: [
    {
      apiGroups: ["rotation.test.mesh.io"],
      apiVersions: ["v1"],
      operations: ["CREATE"],
      resources: ["nothings"],
    },
  ],
  failurePolicy: "Ignore",
  sideEffects: "None",
  admissionReviewVersions: ["v1"],
})

/** A trust bundle stream of `apps/default` (a real bound token) that never acknowledges. */
const laggingStream = async (rootPem: string) => {
  const token = (
    await real.get().ok("POST", `/api/v1/namespaces/${apps}/serviceaccounts/default/token`, {
      body: { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { audiences: ["mesh-ca"] } },
    })
  ).status.token as string
  return openTrustBundleStream(securePort, rootPem, token)
}

const step = (what: string) => console.log(`${new Date().toISOString()} real-orchestrator-ca-key-rotation: ${what}`)

beforeAll(async () => {
  if (real.skip) return
  const orch = real.get()
  await orch.ok("POST", "/api/v1/namespaces", {
    body: { apiVersion: "v1", kind: "Namespace", metadata: { name: MESH_NS } },
  })
  apps = await orch.namespace("apps")
  other = await orch.namespace("other")
  await orch.ok("POST", MUTATING, {
    body: {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "MutatingWebhookConfiguration",
      metadata: { name: INJECTOR },
      webhooks: [webhook("sidecar-injector.mesh.io")],
    },
  })
  await orch.ok("POST", VALIDATING, {
    body: {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: VALIDATOR },
      webhooks: [webhook("validation.mesh.io")],
    },
  })
  ;[monitoringPort, securePort] = await freePorts(2)
  dir = mkdtempSync(join(tmpdir(), "real-ca-key-rotation-"))
  const args = discoveryArgs("", {
    "--registries": "Orchestrator",
    "--orchconfig": orch.kubeconfig,
    "--monitoringAddr": `127.0.0.1:${monitoringPort}`,
    "--secureGRPCAddr": `127.0.0.1:${securePort}`,
  }).filter((a, i, all) => a !== "--configDir" && all[i - 1] !== "--configDir")
  meshd = startDaemon(
    "mesh-discovery",
    args,
    {
      POD_NAME: "meshd-keyrot",
      POD_NAMESPACE: MESH_NS,
      INJECTION_WEBHOOK_CONFIG_NAME: INJECTOR,
      VALIDATION_WEBHOOK_CONFIG_NAME: VALIDATOR,
      MESHCA_SELF_SIGNED_CA_RSA_KEY_SIZE: "2048",
      DEFAULT_WORKLOAD_CERT_TTL: "4s",
      MAX_WORKLOAD_CERT_TTL: `${MAX_TTL_S}s`,
      MESHCA_KEY_ROTATION_CHECK_INTERVAL: "250ms",
      MESHCA_KEY_ROTATION_PUBLISH_MIN_WAIT: "1s",
      MESHCA_KEY_ROTATION_PUBLISH_TIMEOUT: "120s",
    },
    dir,
  )
  await meshd.waitFor(/secure gRPC listener on/, 60_000)
  await until("the monitoring listener", () => rotationStatus().catch(() => undefined))
}, 180_000)

afterAll(async () => {
  await meshd?.stop("SIGKILL")
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

describe.skipIf(real.skip)("root key rotation: the orchestrator delivery points", () => {
  it("both roots in every mesh-ca-root-cert ConfigMap and webhook caBundle during the overlap, the new one after", async () => {
    const before = await rotationStatus()
    const oldSerial = before.root.serial
    await until("every delivery point holding the root", () => everywhere([oldSerial]), 60_000)
    const rootPem = (await real.get().ok("GET", `/api/v1/namespaces/${apps}/configmaps/mesh-ca-root-cert`)).data[
      "root-cert.pem"
    ] as string
    const stream = await laggingStream(rootPem)
    await until("the lagging stream counted", async () =>
      (await rotationStatus()).watchers.total === 1 ? true : undefined,
    )

    const rotated = await fetch(`http://127.0.0.1:${monitoringPort}/debug/ca_rotate_key`, { method: "POST" })
    expect(rotated.status).toBe(200)
    const begun = (await rotated.json()) as KeyRotationStatus
    const newSerial = begun.pending!.serial
    const started = Date.parse(begun.pending!.publishedAt)
    step(`rotation started: ${oldSerial} -> ${newSerial}`)

    // (a) held by the stream that never acknowledges: the old key signs, both roots everywhere.
    const published = await until("both roots at every delivery point in phase (a)", () =>
      everywhere([oldSerial, newSerial]),
    )
    const publishedMs = Date.now() - started
    const a = await rotationStatus()
    expect(a.phase).toBe("publishing")
    expect(a.root.serial).toBe(oldSerial)
    expect(a.watchers.lagging).toHaveLength(1)
    step(`phase (a): both roots at ${Object.keys(published).length} delivery points after ${publishedMs} ms`)

    // (b) the stream gone, the new key signs; the old root is still everywhere, after the new one.
    stream.close()
    await until("the new key signing", async () => {
      const s = await rotationStatus()
      return s.phase === "retaining" && s.root.serial === newSerial ? s : undefined
    })
    const switchedMs = Date.now() - started
    const overlap = await until(
      "both roots, the new first, at every delivery point in phase (b)",
      () => everywhere([newSerial, oldSerial]),
      MAX_TTL_S * 1000,
    )
    expect((await rotationStatus()).phase).toBe("retaining")
    step(`phase (b): the new key signs after ${switchedMs} ms; both roots at ${Object.keys(overlap).length} points`)

    // (c) MAX_WORKLOAD_CERT_TTL after the switch, only the new root is left anywhere.
    await until(
      "the old root retired",
      async () => {
        const s = await rotationStatus()
        return s.phase === "idle" && s.bundle.roots === 1 ? s : undefined
      },
      (MAX_TTL_S + 20) * 1000,
    )
    const retiredMs = Date.now() - started
    const after = await until("only the new root at every delivery point", () => everywhere([newSerial]))
    const settledMs = Date.now() - started
    expect(Object.keys(after).sort()).toEqual([apps, other, INJECTOR, VALIDATOR].sort())
    console.log(
      `key rotation on the real API server: both roots at every ConfigMap and webhook ${publishedMs} ms after publishing, switched ${switchedMs} ms, old root retired ${retiredMs} ms, gone from every delivery point ${settledMs} ms`,
    )
  }, 150_000)
})
