/**
 * Root key rotation of the self-signed CA (issue 43), phases driven by TestClock: (a) the new
 * root is published beside the current one while the old key signs, until every watching agent
 * acknowledged the bundle (or the publish timeout); (b) the new key signs; (c) the old root
 * leaves the bundle MAX_WORKLOAD_CERT_TTL after the switch. A restart resumes phase (a) from the
 * state directory; a key that no longer matches the configured size starts a rotation.
 */
import { existsSync, statSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, TestClock } from "effect"
import { makeCertificateAuthority } from "../../../src/layers/ca/authority.js"
import { STATE_FILES } from "../../../src/layers/ca/key-material.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import type { CertificateAuthorityShape, KeyRotationShape } from "../../../src/services/ca/ca.js"
import { parseCsr } from "../../../src/services/ca/csr.js"
import { bundleVersion, DEFAULT_KEY_ROTATION } from "../../../src/services/ca/key-rotation.js"
import { trustBundlePem } from "../../../src/services/ca/material.js"
import { Metrics } from "../../../src/services/metrics/metrics.js"
import { adjustUntil, counterValue, keyRotationTestSettings, makeCsr, opensslVerifyAt, tempDir } from "./helpers.js"

const ID = "spiffe://cluster.local/ns/default/sa/sleep"

const settings = keyRotationTestSettings

const issue = (ca: CertificateAuthorityShape) =>
  Effect.gen(function* () {
    const { csrPem } = yield* Effect.promise(() => makeCsr([ID]))
    return yield* ca.sign({ csr: yield* parseCsr(csrPem), identities: [ID], requestedTtlSeconds: 0 })
  })

const verifyAt = (dir: string, bundle: string, leaf: string, atMs: number) =>
  Effect.promise(() => opensslVerifyAt(dir, bundle, leaf, atMs))

const rotationOf = (ca: CertificateAuthorityShape): KeyRotationShape => {
  if (ca.keyRotation === undefined) throw new Error("the CA has no key rotation")
  return ca.keyRotation
}

const currentVersion = (ca: CertificateAuthorityShape) =>
  Effect.map(ca.material, (m) => bundleVersion(trustBundlePem(m)))

const gauge = (name: string) => Effect.flatMap(Metrics, (m) => Effect.promise(() => counterValue(m.registry, name)))

describe("root key rotation", () => {
  it.scoped("publishes the new root, waits for every agent, switches keys, then retires the old root", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => tempDir("keyrot"))
      const t0 = Math.floor(Date.now() / 1000) * 1000
      yield* TestClock.setTime(t0)
      const ca = yield* makeCertificateAuthority(settings(dir))
      const rotation = rotationOf(ca)
      const old = (yield* ca.material).root
      const agent = yield* rotation.watch.register("spiffe://cluster.local/ns/default/sa/sleep", "ipv4:127.0.0.1:1")
      yield* rotation.watch.ack(agent, yield* currentVersion(ca))
      const oldLeaf = (yield* issue(ca))[0]!

      // (a) publish: both roots in the bundle, the old key still signs.
      const started = yield* rotation.rotate
      expect(started.phase).toBe("publishing")
      expect(started.pending?.key).toBe("RSA-2048")
      const published = yield* ca.material
      const fresh = published.trustBundle[1]!
      expect(published.trustBundle.map((c) => c.serialNumber)).toEqual([old.serialNumber, fresh.serialNumber])
      expect(fresh.serialNumber).not.toBe(old.serialNumber)
      expect(Buffer.from(fresh.publicKey.rawData).equals(Buffer.from(old.publicKey.rawData))).toBe(false)
      expect(published.signingCert.equal(old)).toBe(true)
      expect(statSync(join(dir, STATE_FILES.pending)).mode & 0o777).toBe(0o600)
      expect(yield* gauge("meshca_server_key_rotation_phase")).toBe(1)
      // The response's last element is the bundle: both roots reach the agent.
      const during = yield* issue(ca)
      expect(during[during.length - 1]).toBe(trustBundlePem(published))
      expect(yield* verifyAt(dir, trustBundlePem(published), during[0]!, t0 + 1000)).toContain("OK")
      // Rotating again while a rotation is under way changes nothing.
      expect((yield* rotation.rotate).pending?.serial).toBe(fresh.serialNumber)

      // The agent has not acknowledged the new bundle: past the minimum wait, still publishing.
      yield* TestClock.adjust(Duration.seconds(60))
      expect((yield* ca.material).signingCert.equal(old)).toBe(true)
      const waiting = yield* rotation.status
      expect(waiting.decision).toMatch(/1 of 1 agent\(s\) have not acknowledged/)
      expect(waiting.watchers.lagging.map((w) => w.identity)).toEqual([ID])
      expect(yield* gauge("meshca_server_trust_bundle_watchers_current")).toBe(0)

      // (b) once it has, the next check switches to the new key.
      yield* rotation.watch.ack(agent, yield* currentVersion(ca))
      expect(yield* gauge("meshca_server_trust_bundle_watchers_current")).toBe(1)
      const switched = yield* adjustUntil(ca, Duration.seconds(10), (m) => m.signingCert.equal(fresh))
      const switchedAt = t0 + 70_000
      expect(switched.signingCert.equal(fresh)).toBe(true)
      expect(switched.trustBundle.map((c) => c.serialNumber)).toEqual([fresh.serialNumber, old.serialNumber])
      expect(existsSync(join(dir, STATE_FILES.pending))).toBe(false)
      const status = yield* rotation.status
      expect(status.phase).toBe("retaining")
      expect(status.retired).toEqual([
        { serial: old.serialNumber, retainUntil: new Date(switchedAt + 2 * 3_600_000).toISOString() },
      ])
      const newLeaf = (yield* issue(ca))[0]!
      const overlap = trustBundlePem(switched)
      // During the overlap both the old key's and the new key's certificates verify.
      expect(yield* verifyAt(dir, overlap, oldLeaf, switchedAt + 1000)).toContain("OK")
      expect(yield* verifyAt(dir, overlap, newLeaf, switchedAt + 1000)).toContain("OK")

      // (c) MAX_WORKLOAD_CERT_TTL (2h) after the switch, the old root leaves the bundle.
      const after = yield* adjustUntil(ca, Duration.hours(2), (m) => m.trustBundle.length === 1)
      expect(after.trustBundle.map((c) => c.serialNumber)).toEqual([fresh.serialNumber])
      expect((yield* rotation.status).phase).toBe("idle")
      expect(yield* gauge("meshca_server_key_rotation_phase")).toBe(0)
      expect(yield* verifyAt(dir, trustBundlePem(after), oldLeaf, switchedAt + 1000)).not.toContain("OK")
      expect(yield* verifyAt(dir, trustBundlePem(after), newLeaf, switchedAt + 1000)).toContain("OK")
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("publishes for at least the minimum wait, even when every agent acknowledged at once", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => tempDir("keyrot-minwait"))
      yield* TestClock.setTime(Math.floor(Date.now() / 1000) * 1000)
      const ca = yield* makeCertificateAuthority(settings(dir))
      const rotation = rotationOf(ca)
      const agent = yield* rotation.watch.register(ID, "ipv4:127.0.0.1:1")
      const pending = (yield* rotation.rotate).pending!.serial
      yield* rotation.watch.ack(agent, yield* currentVersion(ca))
      yield* TestClock.adjust(Duration.seconds(20))
      expect((yield* ca.material).root.serialNumber).not.toBe(pending)
      expect((yield* rotation.status).decision).toMatch(/minimum wait/)
      yield* adjustUntil(ca, Duration.seconds(10), (m) => m.root.serialNumber === pending)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("resumes phase (a) after a restart, and switches at the publish timeout without acknowledgements", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => tempDir("keyrot-restart"))
      yield* TestClock.setTime(Math.floor(Date.now() / 1000) * 1000)
      const pending = yield* Effect.scoped(
        Effect.gen(function* () {
          const ca = yield* makeCertificateAuthority(settings(dir))
          return (yield* rotationOf(ca).rotate).pending!.serial
        }),
      )
      const ca = yield* makeCertificateAuthority(settings(dir))
      const resumed = yield* rotationOf(ca).status
      expect(resumed.phase).toBe("publishing")
      expect(resumed.pending?.serial).toBe(pending)
      expect((yield* ca.material).trustBundle).toHaveLength(2)
      // An agent that never acknowledges holds the switch back until the timeout (10 min).
      yield* rotationOf(ca).watch.register("spiffe://cluster.local/ns/default/sa/stuck", "ipv4:127.0.0.1:2")
      yield* TestClock.adjust(Duration.minutes(9))
      expect((yield* ca.material).root.serialNumber).not.toBe(pending)
      yield* adjustUntil(ca, Duration.minutes(1), (m) => m.root.serialNumber === pending)
      expect((yield* rotationOf(ca).status).decision).toMatch(/publish timeout reached with 1 of 1 agent/)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("rotates on its own when the root key no longer matches the configured size", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => tempDir("keyrot-mismatch"))
      yield* TestClock.setTime(Math.floor(Date.now() / 1000) * 1000)
      yield* Effect.scoped(makeCertificateAuthority(settings(dir)))
      const ca = yield* makeCertificateAuthority(
        settings(dir, {
          rsaKeySize: 3072,
          keyRotation: { ...settings(dir).keyRotation!, rotateOnKeyMismatch: true },
        }),
      )
      expect((yield* rotationOf(ca).status).root.key).toBe("RSA-2048")
      yield* adjustUntil(ca, Duration.seconds(10), (m) => m.trustBundle.length === 2)
      const status = yield* rotationOf(ca).status
      expect(status.phase).toBe("publishing")
      expect(status.pending?.key).toBe("RSA-3072")
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("refuses trust bundle watchers past MESHCA_TRUST_BUNDLE_MAX_WATCHERS, and counts one leaving", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => tempDir("keyrot-bound"))
      yield* TestClock.setTime(Date.now())
      const ca = yield* makeCertificateAuthority(
        settings(dir, { keyRotation: { ...DEFAULT_KEY_ROTATION, maxWatchers: 2 } }),
      )
      const watch = rotationOf(ca).watch
      const a = yield* watch.register("a", "p")
      yield* watch.register("b", "p")
      const refused = yield* Effect.exit(watch.register("c", "p"))
      expect(Exit.isFailure(refused)).toBe(true)
      expect(String(Exit.isFailure(refused) ? refused.cause : "")).toContain("MESHCA_TRUST_BUNDLE_MAX_WATCHERS")
      expect(yield* gauge("meshca_server_trust_bundle_watchers")).toBe(2)
      yield* watch.unregister(a)
      yield* watch.register("c", "p")
      expect(yield* gauge("meshca_server_trust_bundle_watchers")).toBe(2)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})
