/**
 * The workload identity following the CA's trust bundle (issue 43): a bundle from the watch
 * stream replaces the held roots at once (root-cert.pem rewritten, a new value on `changes`, which
 * SDS pushes as ROOTCA, the CA client trusting it) and is acknowledged only after that; a renewal
 * answered with an older bundle keeps the watched roots.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Fiber, Layer, Option, Queue, Ref, Stream, TestClock } from "effect"
import { makeWorkloadIdentity } from "../../../../src/layers/agent/identity/identity.js"
import { generateEcKey } from "../../../../src/layers/ca/keys.js"
import { layer as metricsLayer } from "../../../../src/layers/metrics.js"
import { CaClient, CERT_FILES, WorkloadIdentity } from "../../../../src/services/agent/identity/identity.js"
import { createSelfSignedRoot, toPem } from "../../../../src/services/ca/material.js"
import { parseCertificates } from "../../../../src/services/ca/x509.js"
import { makeFakeCa } from "./fake-ca.js"

const ID = "spiffe://cluster.local/ns/default/sa/sleep"

const otherRoot = Effect.gen(function* () {
  const keys = yield* generateEcKey("P-256")
  return toPem(yield* createSelfSignedRoot(keys, { trustDomain: "cluster.local", ttl: Duration.days(1), nowMs: 0 }))
})

const count = (pem: string) => parseCertificates(pem).length

describe("workload identity following the trust bundle", () => {
  it.scoped("applies a watched bundle before acknowledging it, and keeps it across a renewal", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "mesh-agent-bundle-")))
      yield* Effect.addFinalizer(() => Effect.promise(() => rm(dir, { recursive: true, force: true })))
      yield* Effect.promise(() => writeFile(join(dir, "token"), "header.payload.signature\n"))
      const fake = yield* makeFakeCa(Duration.hours(1))
      const bundles = yield* Queue.unbounded<string>()
      const acks = yield* Queue.unbounded<string>()
      const trusted = yield* Ref.make("")
      const client = Layer.effect(
        CaClient,
        Effect.map(CaClient, (base) =>
          CaClient.of({
            sign: base.sign,
            watchTrustBundle: (credentials, onBundle) =>
              Effect.gen(function* () {
                yield* credentials
                for (;;) {
                  const bundle = yield* Queue.take(bundles)
                  yield* onBundle(bundle)
                  yield* Queue.offer(acks, bundle)
                }
              }),
            trustRoots: (pem) => Ref.set(trusted, pem),
          }),
        ),
      ).pipe(Layer.provide(fake.layer))
      const context = yield* Layer.build(
        Layer.scoped(
          WorkloadIdentity,
          makeWorkloadIdentity({
            identity: ID,
            keySpec: { kind: "EC", curve: "P-256" },
            ttlSeconds: 3600,
            tokenPath: join(dir, "token"),
            outputDir: join(dir, "certs"),
            renewal: { graceRatio: 0.5, jitter: 0 },
          }),
        ),
      ).pipe(Effect.provide(Layer.merge(client, metricsLayer("test"))))
      const identity = Context.get(context, WorkloadIdentity)
      const rootFile = () => Effect.promise(() => readFile(join(dir, "certs", CERT_FILES.root), "utf8"))
      expect(count(yield* rootFile())).toBe(1)
      expect(yield* Ref.get(trusted)).toBe((yield* identity.current).rootCertPem)

      const extra = yield* otherRoot
      const bundle = `${fake.rootPem}${extra}`
      const next = yield* Effect.fork(
        identity.changes.pipe(
          Stream.filter((c) => c.rootCertPem === bundle),
          Stream.runHead,
        ),
      )
      yield* Queue.offer(bundles, bundle)
      expect(yield* Queue.take(acks)).toBe(bundle)
      // By the acknowledgement, the file, the held certificate (SDS) and the CA client have it.
      expect(yield* rootFile()).toBe(bundle)
      expect(Option.isSome(yield* Fiber.join(next))).toBe(true)
      expect(yield* Ref.get(trusted)).toBe(bundle)

      // The fake CA answers renewals with its one root: the watched bundle's roots are kept.
      const held = yield* identity.current
      const renewed = yield* Effect.fork(
        identity.changes.pipe(
          Stream.filter((c) => c.keyPem !== held.keyPem),
          Stream.runHead,
        ),
      )
      yield* TestClock.adjust(Duration.minutes(30))
      const after = Option.getOrThrow(yield* Fiber.join(renewed))
      expect(count(after.rootCertPem)).toBe(2)
      expect(after.rootCertPem).toContain(extra.trim())
      expect(count(yield* rootFile())).toBe(2)

      // A bundle without the fake's root replaces what is held.
      yield* Queue.offer(bundles, extra)
      expect(yield* Queue.take(acks)).toBe(extra)
      expect(yield* rootFile()).toBe(extra)
    }),
  )
})
