/** A CaClient backed by a real in-memory self-signed root (test only): can be switched down. */
import { Clock, Duration, Effect, Layer, Queue, Ref } from "effect"
import { generateEcKey } from "../../../../src/layers/ca/keys.js"
import { CaCallError, CaClient, type CaCredentials } from "../../../../src/services/agent/identity/identity.js"
import { parseCsr } from "../../../../src/services/ca/csr.js"
import { createSelfSignedRoot, type SigningMaterial, signLeaf, toPem } from "../../../../src/services/ca/material.js"

export interface FakeCa {
  readonly down: Ref.Ref<boolean>
  readonly calls: Queue.Queue<CaCredentials>
  readonly rootPem: string
  readonly layer: Layer.Layer<CaClient>
}

export const makeFakeCa = (defaultTtl: Duration.Duration) =>
  Effect.gen(function* () {
    const keys = yield* generateEcKey("P-256")
    const root = yield* createSelfSignedRoot(keys, { trustDomain: "cluster.local", ttl: Duration.days(3650), nowMs: 0 })
    const material: SigningMaterial = {
      signingCert: root,
      signingKey: keys.privateKey,
      intermediates: [],
      root,
      trustBundle: [root],
      source: "self-signed",
    }
    const down = yield* Ref.make(false)
    const calls = yield* Queue.unbounded<CaCredentials>()
    const rootPem = toPem(root)
    const layer = Layer.succeed(
      CaClient,
      CaClient.of({
        sign: (csrPem, validitySeconds, credentials) =>
          Effect.gen(function* () {
            yield* Queue.offer(calls, credentials)
            if (yield* Ref.get(down)) return yield* new CaCallError({ reason: "connection refused", code: 14 })
            const csr = yield* parseCsr(csrPem).pipe(Effect.mapError((e) => new CaCallError({ reason: e.reason })))
            const leaf = yield* signLeaf(material, {
              spki: csr.spki,
              uris: csr.sans.uris,
              ttl: validitySeconds > 0 ? Duration.seconds(validitySeconds) : defaultTtl,
              nowMs: yield* Clock.currentTimeMillis,
            }).pipe(Effect.mapError((e) => new CaCallError({ reason: e.reason })))
            return [leaf.pem, rootPem]
          }),
      }),
    )
    return { down, calls, rootPem, layer } satisfies FakeCa
  })
