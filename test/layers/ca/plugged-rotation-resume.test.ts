/**
 * A plugged-in CA's change of root (issue 43) across restarts, under TestClock: the source (here
 * one the test controls, as ROOT_CA_DIR or the `cacerts` Secret would be) already holds the new
 * CA, so the previous one and the retained roots come back from `plugged-rotation.json` in the
 * state directory. Stopped in phase (a), the CA starts again publishing the same root with the
 * previous CA signing; stopped in phase (c), the old root stays trusted until its end date; a
 * source reverted to the previous CA while stopped needs no overlap.
 */
import { existsSync, statSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Option, Queue, Ref, Stream, TestClock } from "effect"
import { makeCertificateAuthority } from "../../../src/layers/ca/authority.js"
import {
  assemblePluggedTexts,
  createSelfSigned,
  type LoadedMaterial,
  STATE_FILES,
} from "../../../src/layers/ca/key-material.js"
import type { PluggedSource } from "../../../src/layers/ca/key-sources.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import type { CertificateAuthorityShape } from "../../../src/services/ca/ca.js"
import { parseCsr } from "../../../src/services/ca/csr.js"
import { type SigningMaterial, toPem, trustBundlePem } from "../../../src/services/ca/material.js"
import { changeUntil, keyRotationTestSettings, makeCsr, opensslVerifyAt, tempDir } from "./helpers.js"

const ID = "spiffe://cluster.local/ns/default/sa/sleep"

const settings = (stateDir: string) => keyRotationTestSettings(stateDir)

/** A plugged-in CA whose signing certificate is its own root (a CA in ROOT_CA_DIR's layout). */
const pluggedCa = (nowMs: number) =>
  Effect.gen(function* () {
    const made = yield* createSelfSigned(
      { trustDomain: "cluster.local", rsaKeySize: 2048, ttl: Duration.hours(1000) },
      nowMs,
    )
    const pem = toPem(made.material.root)
    return yield* assemblePluggedTexts(
      { cert: pem, key: made.key.privateKeyPem, chain: undefined, root: pem },
      { cert: "test", key: "test", chain: undefined, root: "test", bundle: "test" },
    )
  })

/** A source holding `held` now; a tick on `changed` makes the CA read it again. */
const sourceOf = (held: Ref.Ref<LoadedMaterial>, changed: Queue.Queue<void>): PluggedSource => ({
  origin: "the test's source",
  load: Effect.map(Ref.get(held), Option.some),
  changes: Stream.fromQueue(changed),
})

const issueLeaf = (ca: CertificateAuthorityShape) =>
  Effect.gen(function* () {
    const { csrPem } = yield* Effect.promise(() => makeCsr([ID]))
    return (yield* ca.sign({ csr: yield* parseCsr(csrPem), identities: [ID], requestedTtlSeconds: 0 }))[0]!
  })

const serialsOf = (m: SigningMaterial) => m.trustBundle.map((c) => c.serialNumber)

describe("plugged-in CA change of root across restarts", () => {
  it.scoped("resumes phase (a) with the previous CA signing, then keeps the old root through phase (c)", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => tempDir("plugged-resume"))
      const t0 = Math.floor(Date.now() / 1000) * 1000
      yield* TestClock.setTime(t0)
      const a = yield* pluggedCa(t0)
      const b = yield* pluggedCa(t0)
      const [rootA, rootB] = [a.material.root, b.material.root]
      const held = yield* Ref.make(a)
      const start = Effect.gen(function* () {
        const changed = yield* Queue.unbounded<void>()
        const ca = yield* makeCertificateAuthority(settings(dir), { plugged: sourceOf(held, changed) })
        return { ca, changed }
      })

      // The first process: the source is replaced by B; an agent that never acknowledges holds phase (a).
      const beganMs = yield* Effect.scoped(
        Effect.gen(function* () {
          const { ca, changed } = yield* start
          yield* ca.keyRotation!.watch.register(ID, "ipv4:127.0.0.1:1")
          yield* Ref.set(held, b)
          const both = yield* changeUntil(ca, Queue.offer(changed, undefined), (m) => m.trustBundle.length === 2)
          expect(both.signingCert.equal(rootA)).toBe(true)
          expect(statSync(join(dir, STATE_FILES.pluggedRotation)).mode & 0o777).toBe(0o600)
          yield* TestClock.adjust(Duration.seconds(60))
          expect((yield* ca.material).signingCert.equal(rootA)).toBe(true)
          return Date.parse((yield* ca.keyRotation!.status).pending!.publishedAt)
        }),
      )
      expect(beganMs).toBe(t0)

      // Restarted in phase (a): B is published again from when it began, A signs.
      const restartedAt = t0 + 60_000
      const switchedAt = yield* Effect.scoped(
        Effect.gen(function* () {
          const { ca } = yield* start
          const status = yield* ca.keyRotation!.status
          expect(status.phase).toBe("publishing")
          expect(status.pending?.serial).toBe(rootB.serialNumber)
          expect(status.pending?.publishedAt).toBe(new Date(t0).toISOString())
          const material = yield* ca.material
          expect(material.signingCert.equal(rootA)).toBe(true)
          expect(serialsOf(material)).toEqual([rootA.serialNumber, rootB.serialNumber])
          // A's certificates still verify against A alone: it is A's key that signs.
          const leaf = yield* issueLeaf(ca)
          expect(yield* Effect.promise(() => opensslVerifyAt(dir, toPem(rootA), leaf, restartedAt + 1000))).toContain(
            "OK",
          )
          // The minimum wait counts from the restart (agents reconnect first): 30 s, then B signs.
          yield* TestClock.adjust(Duration.seconds(20))
          expect((yield* ca.material).signingCert.equal(rootA)).toBe(true)
          const switched = yield* changeUntil(ca, TestClock.adjust(Duration.seconds(10)), (m) =>
            m.signingCert.equal(rootB),
          )
          expect(serialsOf(switched)).toEqual([rootB.serialNumber, rootA.serialNumber])
          const after = yield* issueLeaf(ca)
          expect(
            yield* Effect.promise(() => opensslVerifyAt(dir, toPem(rootB), after, restartedAt + 31_000)),
          ).toContain("OK")
          return restartedAt + 30_000
        }),
      )

      // Restarted in phase (c): A stays trusted until MAX_WORKLOAD_CERT_TTL (2 h) after the switch.
      yield* TestClock.adjust(Duration.minutes(30))
      yield* Effect.scoped(
        Effect.gen(function* () {
          const { ca } = yield* start
          const status = yield* ca.keyRotation!.status
          expect(status.phase).toBe("retaining")
          expect(status.retired).toEqual([
            { serial: rootA.serialNumber, retainUntil: new Date(switchedAt + 2 * 3_600_000).toISOString() },
          ])
          const material = yield* ca.material
          expect(material.signingCert.equal(rootB)).toBe(true)
          expect(trustBundlePem(material)).toBe(toPem(rootB) + toPem(rootA))
          const single = yield* changeUntil(ca, TestClock.adjust(Duration.hours(2)), (m) => m.trustBundle.length === 1)
          expect(serialsOf(single)).toEqual([rootB.serialNumber])
          expect(existsSync(join(dir, STATE_FILES.pluggedRotation))).toBe(false)
          expect((yield* ca.keyRotation!.status).phase).toBe("idle")
        }),
      )
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("a source reverted to the previous CA while stopped needs no overlap", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => tempDir("plugged-revert"))
      const t0 = Math.floor(Date.now() / 1000) * 1000
      yield* TestClock.setTime(t0)
      const a = yield* pluggedCa(t0)
      const b = yield* pluggedCa(t0)
      const held = yield* Ref.make(a)
      yield* Effect.scoped(
        Effect.gen(function* () {
          const changed = yield* Queue.unbounded<void>()
          const ca = yield* makeCertificateAuthority(settings(dir), { plugged: sourceOf(held, changed) })
          yield* Ref.set(held, b)
          yield* changeUntil(ca, Queue.offer(changed, undefined), (m) => m.trustBundle.length === 2)
        }),
      )
      expect(existsSync(join(dir, STATE_FILES.pluggedRotation))).toBe(true)
      yield* Ref.set(held, a)
      const ca = yield* makeCertificateAuthority(settings(dir), {
        plugged: sourceOf(held, yield* Queue.unbounded<void>()),
      })
      expect((yield* ca.keyRotation!.status).phase).toBe("idle")
      const material = yield* ca.material
      expect(material.signingCert.equal(a.material.root)).toBe(true)
      expect(serialsOf(material)).toEqual([a.material.root.serialNumber])
      expect(existsSync(join(dir, STATE_FILES.pluggedRotation))).toBe(false)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})
