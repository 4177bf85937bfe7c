/**
 * End-to-end: the agent's workload identity against the real CA server (127.0.0.1:0, TLS), with a
 * token from a local OIDC issuer; the files it writes verified by the real openssl; renewal
 * authenticated by the held certificate once the token is gone; MESHD_SAN enforced.
 */
import { mkdir, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { Effect, Layer, ManagedRuntime, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { layer as caClientLayer, makeCaClient } from "../../src/layers/agent/identity/ca-client.js"
import { generateKeyAndCsr } from "../../src/layers/agent/identity/csr.js"
import { layer as workloadIdentityLayer } from "../../src/layers/agent/identity/identity.js"
import { layer as metricsLayer } from "../../src/layers/metrics.js"
import { CERT_FILES, WorkloadIdentity } from "../../src/services/agent/identity/identity.js"
import { Metrics } from "../../src/services/metrics/metrics.js"
import { startTestCa, type TestCa } from "../fixtures/agent/control-plane.js"
import { counterValue, execFileAsync, type TestIssuer } from "../layers/ca/helpers.js"

const ID = "spiffe://cluster.local/ns/default/sa/sleep"
const SUB = "system:serviceaccount:default:sleep"

let testCa: TestCa
let issuer: TestIssuer
let port: number
let rootPem: string
let dir: string

beforeAll(async () => {
  testCa = await startTestCa()
  ;({ issuer, dir, rootPem, caPort: port } = testCa)
})

afterAll(async () => {
  await testCa?.close()
})

const agent = async (name: string, keySpec: { kind: "RSA"; bits: number } | { kind: "EC"; curve: "P-256" }) => {
  const agentDir = join(dir, name)
  const tokenPath = join(agentDir, "token")
  const outputDir = join(agentDir, "certs")
  await mkdir(agentDir, { recursive: true })
  await writeFile(tokenPath, await issuer.token({ sub: SUB }))
  const layer = workloadIdentityLayer({
    identity: ID,
    keySpec,
    ttlSeconds: 4,
    tokenPath,
    outputDir,
    renewal: { graceRatio: 0.5, jitter: 0.01 },
  }).pipe(
    Layer.provideMerge(
      caClientLayer({ address: `127.0.0.1:${port}`, rootCaPem: rootPem, serverName: "meshd.mesh-system.svc" }),
    ),
    Layer.provideMerge(metricsLayer("mesh-agent")),
  )
  const runtime = ManagedRuntime.make(layer)
  const identity = await runtime.runPromise(WorkloadIdentity)
  return { runtime, identity, tokenPath, outputDir }
}

const openssl = async (outputDir: string) => {
  const verify = await execFileAsync("openssl", [
    "verify",
    "-CAfile",
    join(outputDir, CERT_FILES.root),
    join(outputDir, CERT_FILES.chain),
  ])
  const text = await execFileAsync("openssl", ["x509", "-noout", "-text", "-in", join(outputDir, CERT_FILES.chain)])
  const keyPub = await execFileAsync("openssl", ["pkey", "-pubout", "-in", join(outputDir, CERT_FILES.key)])
  const certPub = await execFileAsync("openssl", [
    "x509",
    "-noout",
    "-pubkey",
    "-in",
    join(outputDir, CERT_FILES.chain),
  ])
  return { verify: verify.stdout, text: text.stdout, keyMatches: keyPub.stdout === certPub.stdout }
}

describe("workload identity against the real CA", () => {
  it("issues an RSA-2048 certificate with the token; openssl verifies chain, SAN and key", async () => {
    const a = await agent("rsa", { kind: "RSA", bits: 2048 })
    try {
      const cert = await a.runtime.runPromise(a.identity.current)
      expect(cert.identity).toBe(ID)
      const result = await openssl(a.outputDir)
      expect(result.verify).toContain(": OK")
      expect(result.text).toContain(`URI:${ID}`)
      expect(result.text).toContain("Public-Key: (2048 bit)")
      expect(result.keyMatches).toBe(true)
      const registry = await a.runtime.runPromise(Effect.map(Metrics, (m) => m.registry))
      expect(await counterValue(registry, "num_outgoing_requests", { request_type: "csr" })).toBe(1)
      expect(await counterValue(registry, "num_failed_outgoing_requests")).toBe(0)
    } finally {
      await a.runtime.dispose()
    }
  })

  it("renews an ECDSA certificate at half life with the held certificate once the token is gone", async () => {
    const a = await agent("ec", { kind: "EC", curve: "P-256" })
    try {
      const first = await a.runtime.runPromise(a.identity.current)
      await rm(a.tokenPath)
      const second = await a.runtime.runPromise(
        a.identity.changes.pipe(
          Stream.filter((c) => c.keyPem !== first.keyPem),
          Stream.runHead,
          Effect.map((o) => (o._tag === "Some" ? o.value : undefined)),
        ),
      )
      expect(second).toBeDefined()
      expect(second!.notBefore.getTime()).toBeGreaterThanOrEqual(first.notBefore.getTime())
      expect(second!.notBefore.getTime()).toBeLessThan(first.notAfter.getTime())
      const result = await openssl(a.outputDir)
      expect(result.verify).toContain(": OK")
      expect(result.text).toContain("ASN1 OID: prime256v1")
      expect(result.keyMatches).toBe(true)
    } finally {
      await a.runtime.dispose()
    }
  })

  it("refuses a CA whose certificate does not carry MESHD_SAN", async () => {
    const client = makeCaClient({ address: `127.0.0.1:${port}`, rootCaPem: rootPem, serverName: "wrong.example.test" })
    const { csrPem } = await Effect.runPromise(generateKeyAndCsr({ kind: "EC", curve: "P-256" }, ID))
    const token = await issuer.token({ sub: SUB })
    const result = await Effect.runPromise(Effect.either(client.sign(csrPem, 60, { token })))
    expect(result._tag).toBe("Left")
  })

  it("is refused by the CA for a token of another service account", async () => {
    const client = makeCaClient({
      address: `127.0.0.1:${port}`,
      rootCaPem: rootPem,
      serverName: "meshd.mesh-system.svc",
    })
    const { csrPem } = await Effect.runPromise(generateKeyAndCsr({ kind: "EC", curve: "P-256" }, ID))
    const token = await issuer.token({ sub: "system:serviceaccount:default:other" })
    const result = await Effect.runPromise(Effect.either(client.sign(csrPem, 60, { token })))
    expect(result._tag).toBe("Left")
    if (result._tag === "Left") expect(result.left.reason).toMatch(/CreateCertificate/)
  })
})
