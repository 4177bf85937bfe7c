/** The trust bundle written to a file follows the CA (here: a root rotation under TestClock). */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Fiber, Layer, Option, Stream, TestClock } from "effect"
import { layerWith as certificateAuthorityLayer } from "../../../src/layers/ca/authority.js"
import { layer as trustBundleFileLayer } from "../../../src/layers/ca/trust-bundle-file.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { CertificateAuthority } from "../../../src/services/ca/ca.js"
import { DEFAULT_KEY_ROTATION } from "../../../src/services/ca/key-rotation.js"
import { parseCertificates } from "../../../src/services/ca/x509.js"
import { tempDir } from "./helpers.js"

describe("trust bundle file", () => {
  it.scoped("is written at start and rewritten with both roots after a rotation", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => tempDir("bundle"))
      yield* TestClock.setTime(Date.now())
      const file = join(dir, "out", "root-cert.pem")
      const ca = certificateAuthorityLayer({
        trustDomain: "cluster.local",
        rootCaDir: join(dir, "none"),
        stateDir: join(dir, "state"),
        rsaKeySize: 2048,
        selfSignedTtl: Duration.hours(10),
        rotation: { checkInterval: Duration.hours(1), gracePeriodPercentile: 20, enableJitter: false },
        policy: { defaultTtl: Duration.hours(1), maxTtl: Duration.hours(1) },
        // No key rotation here: its phase checks would only add TestClock wake-ups.
        keyRotation: { ...DEFAULT_KEY_ROTATION, checkInterval: Duration.hours(24) },
      })
      const context = yield* Layer.build(
        Layer.merge(ca, Layer.provide(trustBundleFileLayer(file), ca)).pipe(Layer.provide(metricsLayer("test"))),
      )
      const authority = Context.get(context, CertificateAuthority)
      expect(parseCertificates(readFileSync(file, "utf8"))).toHaveLength(1)
      const rotated = yield* Effect.fork(
        authority.changes.pipe(
          Stream.filter((m) => m.trustBundle.length === 2),
          Stream.runHead,
          Effect.map(Option.getOrThrow),
        ),
      )
      yield* TestClock.adjust(Duration.hours(8))
      const material = yield* Fiber.join(rotated)
      // The writer runs right after the change: wait for the file to show both roots.
      let roots = parseCertificates(readFileSync(file, "utf8"))
      for (let i = 0; i < 1000 && roots.length !== 2; i++) {
        yield* Effect.yieldNow()
        yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
        roots = parseCertificates(readFileSync(file, "utf8"))
      }
      expect(roots.map((c) => c.serialNumber)).toEqual(material.trustBundle.map((c) => c.serialNumber))
    }),
  )
})
