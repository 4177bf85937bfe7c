import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Chunk, Effect, Queue, Stream } from "effect"
import { describe, expect, it } from "vitest"
import type { ServingMaterial } from "../../../src/layers/secure-grpc/listener.js"
import { ServingCert } from "../../../src/layers/secure-grpc/serving-cert.js"
import { servingCaPem } from "../../../src/layers/webhook/serving-ca.js"
import { opensslServerCert } from "../../support/openssl.js"

describe("servingCaPem", () => {
  const dir = mkdtempSync(join(tmpdir(), "serving-ca-"))
  const one = opensslServerCert(dir, "one", "DNS:meshd")
  const two = opensslServerCert(dir, "two", "DNS:meshd")
  const material = (c: typeof one, extraRoots = ""): ServingMaterial => ({
    clientCaPem: `${c.caPem}${extraRoots}`,
    certChainPem: c.certPem,
    keyPem: c.keyPem,
  })

  it("gives the serving certificate's CA, then each change", async () => {
    const replacements = await Effect.runPromise(Queue.unbounded<ServingMaterial>())
    const cert = ServingCert.of({
      tls: {},
      source: (apply) =>
        Effect.gen(function* () {
          yield* apply(material(one, two.caPem))
          yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(replacements), apply)))
        }),
    })
    const pems = await Effect.runPromise(
      Effect.gen(function* () {
        yield* Queue.offer(replacements, material(one))
        yield* Queue.offer(replacements, material(two))
        return yield* servingCaPem.pipe(Stream.take(2), Stream.runCollect)
      }).pipe(Effect.provideService(ServingCert, cert)),
    )
    // The unrelated root is left out, and the unchanged CA of the first replacement is not repeated.
    expect(Chunk.toReadonlyArray(pems).map((p) => p.trim())).toEqual([one.caPem.trim(), two.caPem.trim()])
  })
})
