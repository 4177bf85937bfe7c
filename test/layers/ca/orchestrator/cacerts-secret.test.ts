/**
 * The CA's key material from the `cacerts` Secret: a plugged-in CA (openssl intermediates) loaded
 * and hot-reloaded — a broken update never published —, and with USE_CACERTS_FOR_SELF_SIGNED_CA
 * the self-signed root stored in the Secret, read back by a second replica, kept when a creation
 * race is lost, and adopted when another replica rotates it. A key rotation (issue 43) stopped in
 * phase (a) resumes from the Secret: the self-signed store keeps the new root in it, a plugged-in
 * CA's previous CA is kept in the Secret beside it (`cacerts-rotation`). Phases under TestClock.
 */
import { mkdir } from "node:fs/promises"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, Option, Ref, Stream, TestClock } from "effect"
import { afterAll, beforeAll } from "vitest"
import { type CaSettings, makeCertificateAuthority } from "../../../../src/layers/ca/authority.js"
import { createSelfSigned } from "../../../../src/layers/ca/key-material.js"
import { makeCacertsKeySources } from "../../../../src/layers/ca/orchestrator/cacerts-secret.js"
import { layer as metricsLayer } from "../../../../src/layers/metrics.js"
import type { CertificateAuthorityShape } from "../../../../src/services/ca/ca.js"
import { decodeSecretData } from "../../../../src/services/ca/cacerts.js"
import { parseCsr } from "../../../../src/services/ca/csr.js"
import { DEFAULT_KEY_ROTATION } from "../../../../src/services/ca/key-rotation.js"
import { type SigningMaterial, toPem } from "../../../../src/services/ca/material.js"
import { parseCertificates } from "../../../../src/services/ca/x509.js"
import type { OrchSecret } from "../../../../src/services/orchestrator/objects.js"
import { type Orchestrator, startOrchestrator } from "../../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../../support/orchestrator/layers.js"
import { adjustUntil, makeCsr, opensslVerify, tempDir } from "../helpers.js"
import { base64, opensslIntermediate } from "./helpers.js"

const ID = "spiffe://cluster.local/ns/default/sa/sleep"

let server: Orchestrator
beforeAll(async () => {
  server = await startOrchestrator({
    namespaces: ["default", "mesh-system", "plugged", "self-keyrot", "plugged-keyrot"],
  })
})
afterAll(() => server.close())

const settings = (work: string, overrides: Partial<CaSettings> = {}): CaSettings => ({
  trustDomain: "cluster.local",
  rootCaDir: join(work, "no-plugged-ca"),
  stateDir: join(work, "state"),
  rsaKeySize: 2048,
  selfSignedTtl: Duration.hours(10),
  rotation: { checkInterval: Duration.hours(1), gracePeriodPercentile: 20, enableJitter: false },
  policy: { defaultTtl: Duration.hours(1), maxTtl: Duration.hours(24) },
  ...overrides,
})

/** Phase checks every 10 s, at least 30 s of publishing: driven by TestClock. */
const keyRotation = {
  keyRotation: {
    ...DEFAULT_KEY_ROTATION,
    checkInterval: Duration.seconds(10),
    publishMinWait: Duration.seconds(30),
    publishTimeout: Duration.minutes(10),
  },
}

const putSecret = (namespace: string, data: Record<string, string>) =>
  server.put({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "cacerts", namespace },
    type: "Opaque",
    data: base64(data),
  })

const issue = (ca: CertificateAuthorityShape) =>
  Effect.gen(function* () {
    const { csrPem } = yield* Effect.promise(() => makeCsr([ID]))
    return yield* ca.sign({ csr: yield* parseCsr(csrPem), identities: [ID], requestedTtlSeconds: 600 })
  })

/** The first published material matching `p`. */
const awaitMaterial = (ca: CertificateAuthorityShape, p: (m: SigningMaterial) => boolean) =>
  ca.changes.pipe(Stream.filter(p), Stream.runHead, Effect.map(Option.getOrThrow), Effect.timeout("10 seconds"))

/** One replica: its own client and informers (living as long as the test's scope), its own CA. */
const replica = (work: string, namespace: string, useForSelfSigned: boolean, overrides: Partial<CaSettings> = {}) =>
  Effect.gen(function* () {
    const orchestrator = yield* Layer.build(orchestratorLayer(server))
    const sources = yield* makeCacertsKeySources({ namespace, useForSelfSigned }).pipe(Effect.provide(orchestrator))
    const ca = yield* makeCertificateAuthority(settings(work, overrides), sources)
    return { ca, sources, orchestrator }
  })

describe("cacerts Secret", () => {
  it.scopedLive("loads a plugged-in CA and hot-reloads it; a broken update keeps the last good CA", () =>
    Effect.gen(function* () {
      const work = yield* Effect.promise(() => tempDir("cacerts-plugged"))
      const a = yield* Effect.promise(() => opensslIntermediate(work, "int-a"))
      const b = yield* Effect.promise(() => opensslIntermediate(work, "int-b"))
      putSecret("plugged", a)
      const { ca } = yield* replica(work, "plugged", false)
      const material = yield* ca.material
      expect(material.source).toBe("plugged")
      expect(material.signingCert.subject).toBe("O=test, CN=int-a")
      const chain = yield* issue(ca)
      expect(yield* Effect.promise(() => opensslVerify(work, chain, a["root-cert.pem"]))).toContain("leaf.pem: OK")

      const seen = yield* Ref.make<Array<string>>([])
      yield* Effect.forkScoped(
        Stream.runForEach(ca.changes, (m) => Ref.update(seen, (list) => [...list, m.signingCert.subject])),
      )
      // A broken bundle (int-b's certificate with int-a's key), then int-b whole.
      const switched = yield* Effect.fork(awaitMaterial(ca, (m) => m.signingCert.subject === "O=test, CN=int-b"))
      putSecret("plugged", { ...b, "ca-key.pem": a["ca-key.pem"] })
      putSecret("plugged", b)
      yield* Fiber.join(switched)
      const after = yield* issue(ca)
      expect(yield* Effect.promise(() => opensslVerify(work, after, b["root-cert.pem"]))).toContain("leaf.pem: OK")
      expect(new Set(yield* Ref.get(seen))).toEqual(new Set(["O=test, CN=int-a", "O=test, CN=int-b"]))
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("stores the self-signed root in the Secret; replicas share it and follow a rotation", () =>
    Effect.gen(function* () {
      const work = yield* Effect.promise(() => tempDir("cacerts-self"))
      const first = yield* replica(join(work, "a"), "mesh-system", true)
      const root = (yield* first.ca.material).root
      expect((yield* first.ca.material).source).toBe("self-signed")
      const stored = server.get("v1", "Secret", "mesh-system", "cacerts") as OrchSecret | undefined
      expect(stored?.type).toBe("mesh.io/ca-root")
      const data = decodeSecretData(stored!)
      expect(Object.keys(data).sort()).toEqual([
        "ca-cert.pem",
        "ca-key.pem",
        "cert-chain.pem",
        "retired-roots.json",
        "root-cert.pem",
      ])

      // A second replica (its own client) reads the same root back instead of making its own.
      const second = yield* replica(join(work, "b"), "mesh-system", true)
      expect((yield* second.ca.material).root.equal(root)).toBe(true)

      // A replica that loses the creation race adopts the winner's root.
      const loser = yield* createSelfSigned(
        { trustDomain: "cluster.local", rsaKeySize: 2048, ttl: Duration.hours(10) },
        Date.now(),
      )
      const kept = yield* second.sources.selfSigned!.create(loser)
      expect(kept.material.root.equal(root)).toBe(true)

      // Another replica stores a new root (as its rotation does): the first one adopts it.
      const rotated = yield* createSelfSigned(
        { trustDomain: "cluster.local", rsaKeySize: 2048, ttl: Duration.hours(10) },
        Date.now(),
      )
      const adopted = yield* Effect.fork(awaitMaterial(first.ca, (m) => m.root.equal(rotated.material.root)))
      yield* second.sources.selfSigned!.persist(rotated)
      yield* Fiber.join(adopted)
      const chain = yield* issue(first.ca)
      expect(yield* Effect.promise(() => opensslVerify(work, chain, toPem(rotated.material.root)))).toContain(
        "leaf.pem: OK",
      )
      // A rotation based on a version someone else has replaced since is refused, not written over it.
      const third = yield* Effect.provide(
        makeCacertsKeySources({ namespace: "mesh-system", useForSelfSigned: true }),
        yield* Layer.build(orchestratorLayer(server)),
      )
      expect(Option.isSome(yield* third.selfSigned!.load)).toBe(true)
      yield* second.sources.selfSigned!.persist(loser)
      const stale = yield* Effect.flip(third.selfSigned!.persist(rotated))
      expect(stale.reason).toContain("changed by another instance")
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("a key rotation stopped in phase (a) resumes from the self-signed store Secret", () =>
    Effect.gen(function* () {
      const work = yield* Effect.promise(() => tempDir("cacerts-keyrot"))
      yield* TestClock.setTime(Math.floor(Date.now() / 1000) * 1000)
      const { old, fresh } = yield* Effect.scoped(
        Effect.gen(function* () {
          const { ca } = yield* replica(join(work, "a"), "self-keyrot", true, keyRotation)
          const old = (yield* ca.material).root
          const fresh = (yield* ca.keyRotation!.rotate).pending!.serial
          return { old, fresh }
        }),
      )
      const stored = decodeSecretData(server.get("v1", "Secret", "self-keyrot", "cacerts") as OrchSecret)
      expect(JSON.parse(stored["key-rotation.json"]!).key).toContain("PRIVATE KEY")
      expect(parseCertificates(stored["root-cert.pem"]!).map((c) => c.serialNumber)).toEqual([old.serialNumber, fresh])

      // Another process (here: another replica's state directory) reads the rotation back.
      const { ca } = yield* replica(join(work, "b"), "self-keyrot", true, keyRotation)
      const status = yield* ca.keyRotation!.status
      expect(status.phase).toBe("publishing")
      expect(status.pending?.serial).toBe(fresh)
      expect((yield* ca.material).signingCert.equal(old)).toBe(true)
      yield* TestClock.adjust(Duration.seconds(20))
      expect((yield* ca.material).signingCert.equal(old)).toBe(true)
      yield* adjustUntil(ca, Duration.seconds(10), (m) => m.root.serialNumber === fresh)
      const after = decodeSecretData(server.get("v1", "Secret", "self-keyrot", "cacerts") as OrchSecret)
      expect(after["key-rotation.json"]).toBeUndefined()
      expect(parseCertificates(after["ca-cert.pem"]!)[0]!.serialNumber).toBe(fresh)
      expect(JSON.parse(after["retired-roots.json"]!)).toHaveLength(1)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("a cacerts replacement under a new root stopped in phase (a) resumes from the Secret beside it", () =>
    Effect.gen(function* () {
      const work = yield* Effect.promise(() => tempDir("cacerts-plugged-keyrot"))
      yield* TestClock.setTime(Math.floor(Date.now() / 1000) * 1000)
      yield* Effect.promise(() => mkdir(join(work, "b")))
      const a = yield* Effect.promise(() => opensslIntermediate(work, "int-a"))
      // Under another root: b's directory makes its own.
      const b = yield* Effect.promise(() => opensslIntermediate(join(work, "b"), "int-b"))
      putSecret("plugged-keyrot", a)
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { ca } = yield* replica(join(work, "first"), "plugged-keyrot", false, keyRotation)
          // An agent that never acknowledges holds phase (a).
          yield* ca.keyRotation!.watch.register(ID, "ipv4:127.0.0.1:1")
          const published = yield* Effect.fork(awaitMaterial(ca, (m) => m.trustBundle.length === 2))
          putSecret("plugged-keyrot", b)
          expect((yield* Fiber.join(published)).signingCert.subject).toBe("O=test, CN=int-a")
        }),
      )
      const kept = server.get("v1", "Secret", "plugged-keyrot", "cacerts-rotation") as OrchSecret
      expect(kept.type).toBe("mesh.io/ca-rotation")
      expect(Object.keys(decodeSecretData(kept))).toEqual(["plugged-rotation.json"])

      const { ca } = yield* replica(join(work, "second"), "plugged-keyrot", false, keyRotation)
      expect((yield* ca.keyRotation!.status).phase).toBe("publishing")
      const material = yield* ca.material
      expect(material.signingCert.subject).toBe("O=test, CN=int-a")
      expect(material.trustBundle).toHaveLength(2)
      const chain = yield* issue(ca)
      expect(yield* Effect.promise(() => opensslVerify(work, chain, a["root-cert.pem"]))).toContain("leaf.pem: OK")
      const switched = yield* adjustUntil(ca, Duration.seconds(30), (m) => m.signingCert.subject === "O=test, CN=int-b")
      expect(switched.trustBundle[1]!.equal(material.root)).toBe(true)
      // Phase (c) is stored too: the Secret now holds the retained root only.
      const retained = JSON.parse(
        decodeSecretData(server.get("v1", "Secret", "plugged-keyrot", "cacerts-rotation") as OrchSecret)[
          "plugged-rotation.json"
        ]!,
      )
      expect(retained.publishing).toBeUndefined()
      expect(retained.retired).toHaveLength(1)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})
