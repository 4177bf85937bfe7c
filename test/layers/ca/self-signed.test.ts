/**
 * The self-signed CA: persisted root kept across restarts, rotation driven by TestClock with the
 * old root kept in the trust bundle until every certificate it signed has expired.
 */
import { existsSync, statSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Option, Stream, TestClock } from "effect"
import { type CaSettings, makeCertificateAuthority } from "../../../src/layers/ca/authority.js"
import { STATE_FILES } from "../../../src/layers/ca/key-material.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import type { CertificateAuthorityShape } from "../../../src/services/ca/ca.js"
import { parseCsr } from "../../../src/services/ca/csr.js"
import { DEFAULT_KEY_ROTATION } from "../../../src/services/ca/key-rotation.js"
import { toPem, trustBundlePem } from "../../../src/services/ca/material.js"
import { x509 } from "../../../src/services/ca/x509.js"
import { Metrics } from "../../../src/services/metrics/metrics.js"
import { counterValue, execFileAsync, makeCsr, opensslVerifyAt, tempDir } from "./helpers.js"

const H = 3_600_000
const ID = "spiffe://cluster.local/ns/default/sa/sleep"

const settings = (stateDir: string, overrides: Partial<CaSettings> = {}): CaSettings => ({
  trustDomain: "cluster.local",
  rootCaDir: join(stateDir, "no-plugged-ca"),
  stateDir,
  rsaKeySize: 2048,
  selfSignedTtl: Duration.hours(10),
  rotation: { checkInterval: Duration.hours(1), gracePeriodPercentile: 20, enableJitter: false },
  policy: { defaultTtl: Duration.hours(1), maxTtl: Duration.hours(1) },
  // No key rotation here: its phase checks would only add thousands of TestClock wake-ups.
  keyRotation: { ...DEFAULT_KEY_ROTATION, checkInterval: Duration.hours(24) },
  ...overrides,
})

const issue = (ca: CertificateAuthorityShape) =>
  Effect.gen(function* () {
    const { csrPem } = yield* Effect.promise(() => makeCsr([ID]))
    return yield* ca.sign({ csr: yield* parseCsr(csrPem), identities: [ID], requestedTtlSeconds: 0 })
  })

/** Waits until the CA publishes material whose root differs from `serial`. */
const nextRoot = (ca: CertificateAuthorityShape, serial: string) =>
  ca.changes.pipe(
    Stream.filter((m) => m.root.serialNumber !== serial),
    Stream.runHead,
    Effect.map(Option.getOrThrow),
  )

const verifyAt = opensslVerifyAt

describe("self-signed root", () => {
  it.scoped("is created once, persisted, and kept across a restart", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => tempDir("persist"))
      yield* TestClock.setTime(Date.now())
      const first = yield* Effect.scoped(Effect.map(makeCertificateAuthority(settings(dir)), (ca) => ca.material)).pipe(
        Effect.flatten,
      )
      expect(first.source).toBe("self-signed")
      expect(first.root.subject).toBe("O=cluster.local")
      expect(statSync(join(dir, STATE_FILES.key)).mode & 0o777).toBe(0o600)
      expect(existsSync(join(dir, STATE_FILES.cert))).toBe(true)
      const second = yield* makeCertificateAuthority(settings(dir)).pipe(Effect.flatMap((ca) => ca.material))
      expect(second.root.serialNumber).toBe(first.root.serialNumber)
      expect(second.root.equal(first.root)).toBe(true)
      const text = yield* Effect.promise(() =>
        execFileAsync("openssl", ["x509", "-noout", "-text", "-in", join(dir, STATE_FILES.cert)]),
      )
      expect(text.stdout).toMatch(/Public-Key: \(2048 bit\)/)
      expect(text.stdout).toMatch(/X509v3 Basic Constraints: critical\s+CA:TRUE/)
      expect(text.stdout).toMatch(/X509v3 Key Usage: critical\s+Certificate Sign/)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("rotates in the grace period; the old root stays trusted until its certificates expire", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => tempDir("rotate"))
      const t0 = Math.floor(Date.now() / 1000) * 1000
      yield* TestClock.setTime(t0)
      const ca = yield* makeCertificateAuthority(settings(dir))
      const metrics = yield* Metrics
      const old = (yield* ca.material).root

      // 7h into a 10h root with a 20% (2h) grace period: no rotation yet.
      yield* TestClock.adjust(Duration.hours(7))
      expect((yield* ca.material).root.serialNumber).toBe(old.serialNumber)
      yield* TestClock.adjust(Duration.minutes(30))
      const beforeChain = yield* issue(ca) // valid 7h30 → 8h30

      // The check at 8h finds the root inside its grace period and rotates it.
      const waiting = yield* Effect.fork(nextRoot(ca, old.serialNumber))
      yield* TestClock.adjust(Duration.minutes(30))
      const rotated = yield* Fiber.join(waiting)
      expect(rotated.trustBundle.map((c) => c.serialNumber)).toEqual([rotated.root.serialNumber, old.serialNumber])
      expect(rotated.root.notBefore.getTime()).toBe(t0 + 8 * H)
      // As the reference does, the rotated root keeps the key.
      expect(Buffer.from(rotated.root.publicKey.rawData).equals(Buffer.from(old.publicKey.rawData))).toBe(true)
      expect(yield* counterGauge(metrics, "meshca_server_root_cert_expiry_timestamp")).toBe(
        Math.floor(rotated.root.notAfter.getTime() / 1000),
      )

      // A certificate issued by the old root still verifies against the two-root bundle.
      const bundle = trustBundlePem(rotated)
      expect(yield* Effect.promise(() => verifyAt(dir, bundle, beforeChain[0]!, t0 + 8.25 * H))).toContain("OK")
      const afterChain = yield* issue(ca)
      // The response ends with the whole trust bundle (issue 43), the current root first.
      expect(afterChain[afterChain.length - 1]!).toBe(bundle)
      expect(bundle.startsWith(toPem(rotated.root))).toBe(true)
      expect(yield* Effect.promise(() => verifyAt(dir, bundle, afterChain[0]!, t0 + 8.25 * H))).toContain("OK")

      // The state directory holds both roots: a restart keeps the two-root bundle.
      const restarted = yield* Effect.scoped(
        Effect.flatMap(
          makeCertificateAuthority(
            settings(dir, {
              rotation: { checkInterval: Duration.zero, gracePeriodPercentile: 20, enableJitter: false },
            }),
          ),
          (c) => c.material,
        ),
      )
      expect(restarted.trustBundle.map((c) => c.serialNumber)).toEqual([rotated.root.serialNumber, old.serialNumber])

      // Workload certificates live at most MAX_WORKLOAD_CERT_TTL (1h): the old root leaves at the check at 9h.
      const pruned = yield* Effect.fork(
        ca.changes.pipe(
          Stream.filter((m) => m.trustBundle.length === 1),
          Stream.runHead,
          Effect.map(Option.getOrThrow),
        ),
      )
      yield* TestClock.adjust(Duration.hours(1))
      const single = yield* Fiber.join(pruned)
      expect(single.trustBundle.map((c) => c.serialNumber)).toEqual([rotated.root.serialNumber])
      expect(single.root.serialNumber).toBe(rotated.root.serialNumber)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("does not rotate when the check interval is zero", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => tempDir("norotate"))
      yield* TestClock.setTime(Date.now())
      const ca = yield* makeCertificateAuthority(
        settings(dir, { rotation: { checkInterval: Duration.zero, gracePeriodPercentile: 20, enableJitter: true } }),
      )
      const root = (yield* ca.material).root
      yield* TestClock.adjust(Duration.hours(9.5))
      expect((yield* ca.material).root.serialNumber).toBe(root.serialNumber)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("caps a workload certificate at the root's expiry", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => tempDir("cap"))
      yield* TestClock.setTime(Date.now())
      const ca = yield* makeCertificateAuthority(
        settings(dir, {
          rotation: { checkInterval: Duration.zero, gracePeriodPercentile: 20, enableJitter: false },
          policy: { defaultTtl: Duration.hours(24), maxTtl: Duration.hours(48) },
        }),
      )
      const root = (yield* ca.material).root
      const chain = yield* issue(ca)
      expect(new x509.X509Certificate(chain[0]!).notAfter.getTime()).toBe(root.notAfter.getTime())
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})

const counterGauge = (metrics: { registry: import("prom-client").Registry }, name: string) =>
  Effect.promise(() => counterValue(metrics.registry, name))
