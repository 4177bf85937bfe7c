/**
 * Root certificate distribution without an orchestrator: the CA's current trust bundle (every
 * root workloads must trust, two during a root rotation) is written to a file, atomically, on
 * start and on every change, for agents and tools to read.
 */
import { mkdir, rename, writeFile } from "node:fs/promises"
import { dirname } from "node:path"
import { Effect, Layer, Stream } from "effect"
import { CertificateAuthority } from "../../services/ca/ca.js"
import { CaMaterialError } from "../../services/ca/errors.js"
import { trustBundlePem } from "../../services/ca/material.js"

export const writeTrustBundle = (path: string, pem: string) =>
  Effect.tryPromise({
    try: async () => {
      await mkdir(dirname(path), { recursive: true })
      const tmp = `${path}.tmp-${process.pid}`
      await writeFile(tmp, pem, { mode: 0o644 })
      await rename(tmp, path)
    },
    catch: (e) => new CaMaterialError({ reason: `cannot write the trust bundle to ${path}: ${(e as Error).message}` }),
  })

/** Keeps `path` equal to the CA's trust bundle (PEM). */
export const layer = (path: string): Layer.Layer<never, CaMaterialError, CertificateAuthority> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const ca = yield* CertificateAuthority
      yield* writeTrustBundle(path, trustBundlePem(yield* Effect.orDie(ca.material)))
      yield* Effect.forkScoped(
        ca.changes.pipe(
          Stream.map(trustBundlePem),
          Stream.changes,
          Stream.runForEach((pem) =>
            writeTrustBundle(path, pem).pipe(Effect.catchAll((e) => Effect.logError(e.reason))),
          ),
        ),
      )
    }),
  )
