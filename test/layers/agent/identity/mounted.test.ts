/**
 * FILE_MOUNTED_CERTS: the identity is read from the mounted key/chain/root, follows changes seen
 * by fs.watch and by the poll, keeps the last good identity when the files are half replaced or
 * garbage, never calls the CA, and fails the start-up when a file is missing.
 */
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Exit, Fiber, Layer, Logger, Queue, Stream, TestClock } from "effect"
import { writeCertFiles } from "../../../../src/layers/agent/identity/files.js"
import { type IdentitySettings, makeWorkloadIdentity } from "../../../../src/layers/agent/identity/identity.js"
import type { MountedWatch } from "../../../../src/layers/agent/identity/mounted.js"
import { layer as metricsLayer } from "../../../../src/layers/metrics.js"
import {
  CERT_FILES,
  type WorkloadCertificate,
  WorkloadIdentity,
} from "../../../../src/services/agent/identity/identity.js"
import { makeFakeCa } from "./fake-ca.js"

const ID = "spiffe://cluster.local/ns/default/sa/sleep"

const tempDir = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "mesh-agent-mounted-"))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true })),
)

/** Two certificates for the same identity from a fake CA (A and B have different keys). */
const twoCertificates = Effect.gen(function* () {
  const dir = yield* tempDir
  const tokenPath = join(dir, "token")
  yield* Effect.promise(() => writeFile(tokenPath, "header.payload.signature\n"))
  const fake = yield* makeFakeCa(Duration.hours(1))
  const issue = Effect.gen(function* () {
    const ctx = yield* Layer.build(Layer.scoped(WorkloadIdentity, makeWorkloadIdentity(settingsFor(tokenPath)))).pipe(
      Effect.provide(Layer.merge(fake.layer, metricsLayer("test"))),
    )
    return yield* Context.get(ctx, WorkloadIdentity).current
  })
  return { a: yield* Effect.scoped(issue), b: yield* Effect.scoped(issue), fake }
})

const settingsFor = (tokenPath: string, overrides: Partial<IdentitySettings> = {}): IdentitySettings => ({
  identity: ID,
  keySpec: { kind: "EC", curve: "P-256" },
  ttlSeconds: 3600,
  tokenPath,
  ...overrides,
})

/** Builds the identity layer on `mountedDir`; log lines go to `logs`. */
const mounted = (mountedDir: string, watch: MountedWatch) =>
  Effect.gen(function* () {
    const fake = yield* makeFakeCa(Duration.hours(1))
    const logs = yield* Queue.unbounded<string>()
    const logger = Logger.make(({ message }) => {
      Queue.unsafeOffer(logs, Array.isArray(message) ? message.join(" ") : String(message))
    })
    const ctx = yield* Layer.build(
      Layer.scoped(
        WorkloadIdentity,
        makeWorkloadIdentity(settingsFor(join(mountedDir, "no-token"), { mountedDir, mountedWatch: watch })),
      ),
    ).pipe(
      Effect.provide(Layer.mergeAll(fake.layer, metricsLayer("test"), Logger.replace(Logger.defaultLogger, logger))),
    )
    return { identity: Context.get(ctx, WorkloadIdentity), fake, logs }
  })

/** The next certificate `identity.changes` emits after the current one. */
/** The first certificate `identity.changes` emits whose chain differs from the one held now. */
const nextChange = (identity: Context.Tag.Service<WorkloadIdentity>) =>
  Effect.flatMap(identity.current, (held) =>
    Effect.forkScoped(
      identity.changes.pipe(
        Stream.filter((c) => c.certChainPem !== held.certChainPem),
        Stream.runHead,
      ),
    ),
  )

const waitForLog = (logs: Queue.Queue<string>, pattern: RegExp) =>
  Effect.gen(function* () {
    for (;;) {
      const line = yield* Queue.take(logs)
      if (pattern.test(line)) return line
    }
  })

/**
 * File events arrive in real time while the TestClock stands still (the fake CA's root is valid
 * from the TestClock's epoch): bound the wait with a real timer.
 */
const within10s = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.raceFirst(
    effect,
    Effect.promise(() => new Promise((r) => setTimeout(r, 10_000))).pipe(
      Effect.zipRight(Effect.dieMessage("no change within 10s")),
    ),
  )

const writePlain = (dir: string, file: string, text: string) => Effect.promise(() => writeFile(join(dir, file), text))

const fsWatch: MountedWatch = { debounce: Duration.zero, pollInterval: Duration.hours(1) }

describe("FILE_MOUNTED_CERTS", () => {
  it.scoped("reads the mounted files and never calls the CA", () =>
    Effect.gen(function* () {
      const { a } = yield* twoCertificates
      const dir = yield* tempDir
      yield* writeCertFiles(dir, a)
      const { identity, fake } = yield* mounted(dir, fsWatch)
      expect((yield* identity.current).keyPem).toBe(a.keyPem)
      expect(yield* Queue.size(fake.calls)).toBe(0)
    }),
  )

  it.scoped("a missing file at start is an error naming FILE_MOUNTED_CERTS and the directory", () =>
    Effect.gen(function* () {
      const { a } = yield* twoCertificates
      const dir = yield* tempDir
      yield* writePlain(dir, CERT_FILES.key, a.keyPem)
      yield* writePlain(dir, CERT_FILES.chain, a.certChainPem)
      const exit = yield* Effect.exit(mounted(dir, fsWatch))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(String(Exit.isFailure(exit) && exit.cause)).toMatch(
        new RegExp(`FILE_MOUNTED_CERTS: cannot read certificates from ${dir}.*root-cert\\.pem`),
      )
    }),
  )

  it.scoped("reloads on a change seen by fs.watch (the ..data swap) and pushes it to subscribers", () =>
    Effect.gen(function* () {
      const { a, b } = yield* twoCertificates
      const dir = yield* tempDir
      yield* writeCertFiles(dir, a)
      const { identity, fake } = yield* mounted(dir, fsWatch)
      const next = yield* nextChange(identity)
      yield* writeCertFiles(dir, b)
      const changed = yield* Fiber.join(next).pipe(within10s)
      expect(changed._tag === "Some" && changed.value.keyPem).toBe(b.keyPem)
      expect((yield* identity.current).keyPem).toBe(b.keyPem)
      expect(yield* Queue.size(fake.calls)).toBe(0)
    }),
  )

  it.scoped("a half-replaced pair keeps the previous identity with a warning; the completed pair is taken", () =>
    Effect.gen(function* () {
      const { a, b } = yield* twoCertificates
      const dir = yield* tempDir
      for (const [file, text] of [
        [CERT_FILES.key, a.keyPem],
        [CERT_FILES.chain, a.certChainPem],
        [CERT_FILES.root, a.rootCertPem],
      ] as const) {
        yield* writePlain(dir, file, text)
      }
      const { identity, logs } = yield* mounted(dir, fsWatch)
      const next = yield* nextChange(identity)
      yield* writePlain(dir, CERT_FILES.key, b.keyPem)
      const warning = yield* waitForLog(logs, /not reloaded/).pipe(within10s)
      expect(warning).toMatch(/keeping the held certificate .*the private key does not match the certificate/)
      expect((yield* identity.current).keyPem).toBe(a.keyPem)
      yield* writePlain(dir, CERT_FILES.chain, b.certChainPem)
      yield* writePlain(dir, CERT_FILES.root, b.rootCertPem)
      const changed = yield* Fiber.join(next).pipe(within10s)
      expect(changed._tag === "Some" && changed.value.certChainPem).toBe(b.certChainPem)
      expect((yield* identity.current).keyPem).toBe(b.keyPem)
    }),
  )

  it.scoped("a chain that does not parse keeps the previous identity with a warning", () =>
    Effect.gen(function* () {
      const { a } = yield* twoCertificates
      const dir = yield* tempDir
      yield* writeCertFiles(dir, a)
      const { identity, logs } = yield* mounted(dir, fsWatch)
      yield* Effect.promise(() => rm(join(dir, CERT_FILES.chain)))
      yield* writePlain(dir, CERT_FILES.chain, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
      // (a warning that the chain is missing may come first, from the moment between rm and write)
      const warning = yield* waitForLog(logs, /not reloaded.*invalid certificate material/).pipe(within10s)
      expect(warning).toMatch(/keeping the held certificate/)
      const current: WorkloadCertificate = yield* identity.current
      expect(current.keyPem).toBe(a.keyPem)
      expect(current.certChainPem).toBe(a.certChainPem)
    }),
  )

  it.scoped("the poll catches a change fs.watch cannot see (the mounted directory re-pointed)", () =>
    Effect.gen(function* () {
      const { a, b } = yield* twoCertificates
      const root = yield* tempDir
      // `certs` is a symlink to a version directory; fs.watch follows it to v1's inode, so
      // re-pointing the link to v2 is invisible to it.
      yield* writeCertFiles(join(root, "v1"), a)
      yield* writeCertFiles(join(root, "v2"), b)
      yield* Effect.promise(() => symlink("v1", join(root, "certs")))
      const dir = join(root, "certs")
      const { identity } = yield* mounted(dir, { debounce: Duration.zero, pollInterval: Duration.seconds(5) })
      const next = yield* nextChange(identity)
      yield* Effect.promise(async () => {
        await mkdir(join(root, "tmp"))
        await symlink("v2", join(root, "tmp", "certs"))
        await rename(join(root, "tmp", "certs"), join(root, "certs"))
      })
      expect((yield* identity.current).keyPem).toBe(a.keyPem)
      yield* TestClock.adjust(Duration.seconds(5))
      const changed = yield* Fiber.join(next)
      expect(changed._tag === "Some" && changed.value.keyPem).toBe(b.keyPem)
    }),
  )
})
