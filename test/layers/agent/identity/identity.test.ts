/**
 * The workload identity layer under TestClock: first issue, renewal at half life, retries with
 * backoff while the CA is down without the held certificate lapsing, the current certificate
 * authenticating when the token is gone, metrics, OUTPUT_CERTS and FILE_MOUNTED_CERTS.
 */
import { existsSync, lstatSync, readlinkSync } from "node:fs"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Clock, Context, Duration, Effect, Fiber, Layer, Option, Queue, Ref, Stream, TestClock } from "effect"
import { readCertFiles, writeCertFiles } from "../../../../src/layers/agent/identity/files.js"
import { type IdentitySettings, makeWorkloadIdentity } from "../../../../src/layers/agent/identity/identity.js"
import { layer as metricsLayer } from "../../../../src/layers/metrics.js"
import { CERT_FILES, WorkloadIdentity } from "../../../../src/services/agent/identity/identity.js"
import { Metrics } from "../../../../src/services/metrics/metrics.js"
import { counterValue } from "../../ca/helpers.js"
import { type FakeCa, makeFakeCa } from "./fake-ca.js"

const ID = "spiffe://cluster.local/ns/default/sa/sleep"
const HOUR = 3_600_000

const tempDir = () => Effect.promise(() => mkdtemp(join(tmpdir(), "mesh-agent-identity-")))

/** Waits (without moving the clock) until some fiber sleeps on the TestClock. */
const awaitSleeper = Effect.gen(function* () {
  for (;;) {
    if (Chunk.size(yield* TestClock.sleeps()) > 0) return
    yield* Effect.promise(() => new Promise<void>((r) => setImmediate(r)))
  }
})

const setup = (overrides: Partial<IdentitySettings> = {}) =>
  Effect.gen(function* () {
    const dir = yield* tempDir()
    yield* Effect.addFinalizer(() => Effect.promise(() => rm(dir, { recursive: true, force: true })))
    const tokenPath = join(dir, "token")
    yield* Effect.promise(() => writeFile(tokenPath, "header.payload.signature\n"))
    const fake: FakeCa = yield* makeFakeCa(Duration.hours(1))
    const settings: IdentitySettings = {
      identity: ID,
      keySpec: { kind: "EC", curve: "P-256" },
      ttlSeconds: 3600,
      tokenPath,
      renewal: { graceRatio: 0.5, jitter: 0 },
      ...overrides,
    }
    const metrics = yield* Effect.serviceOption(Metrics)
    const metricsLayerFor = Option.match(metrics, {
      onNone: () => metricsLayer("test"),
      onSome: (m) => Layer.succeed(Metrics, m),
    })
    const context = yield* Layer.build(Layer.scoped(WorkloadIdentity, makeWorkloadIdentity(settings))).pipe(
      Effect.provide(Layer.merge(fake.layer, metricsLayerFor)),
    )
    return { dir, tokenPath, fake, context, settings }
  })

describe("workload identity", () => {
  it.scoped("requests a certificate with the token at start; cert_expiry_seconds follows the clock", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const { fake, context } = yield* setup().pipe(Effect.provideService(Metrics, metrics))
      const identity = Context_get(context)
      const cert = yield* identity.current
      expect(cert.identity).toBe(ID)
      expect(cert.notAfter.getTime() - cert.notBefore.getTime()).toBe(HOUR)
      expect(cert.rootCertPem.trim()).toBe(fake.rootPem.trim())
      expect(cert.keyPem).toContain("BEGIN PRIVATE KEY")
      const creds = yield* Queue.take(fake.calls)
      expect(creds.token).toBe("header.payload.signature")
      expect(creds.clientCert).toBeUndefined()
      const expiry = async () => (await metrics.registry.getSingleMetric("cert_expiry_seconds")!.get()).values[0]!.value
      expect(yield* Effect.promise(expiry)).toBe(3600)
      yield* TestClock.adjust("10 minutes")
      expect(yield* Effect.promise(expiry)).toBe(3000)
      expect(
        yield* Effect.promise(() => counterValue(metrics.registry, "num_outgoing_requests", { request_type: "csr" })),
      ).toBe(1)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("renews at half of the lifetime, not before", () =>
    Effect.gen(function* () {
      const { fake, context } = yield* setup()
      const identity = Context_get(context)
      yield* Queue.take(fake.calls)
      const first = yield* identity.current
      const renewed = yield* identity.changes.pipe(Stream.drop(1), Stream.take(1), Stream.runCollect, Effect.fork)
      yield* awaitSleeper
      yield* TestClock.adjust(Duration.millis(HOUR / 2 - 1000))
      expect(yield* Queue.size(fake.calls)).toBe(0)
      yield* TestClock.adjust("1 second")
      const [second] = yield* Fiber.join(renewed)
      expect(second!.notBefore.getTime()).toBe(HOUR / 2)
      expect(second!.keyPem).not.toBe(first.keyPem)
      // and again at half of the new lifetime
      const again = yield* identity.changes.pipe(Stream.drop(1), Stream.take(1), Stream.runCollect, Effect.fork)
      yield* awaitSleeper
      yield* TestClock.adjust(Duration.millis(HOUR / 2))
      const [third] = yield* Fiber.join(again)
      expect(third!.notBefore.getTime()).toBe(HOUR)
    }),
  )

  it.scoped("keeps the held certificate and retries with backoff while the CA is down; renews before expiry", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const { fake, context } = yield* setup().pipe(Effect.provideService(Metrics, metrics))
      const identity = Context_get(context)
      yield* Queue.take(fake.calls)
      const first = yield* identity.current
      yield* Ref.set(fake.down, true)
      const renewed = yield* identity.changes.pipe(Stream.drop(1), Stream.take(1), Stream.runCollect, Effect.fork)
      yield* awaitSleeper
      yield* TestClock.adjust(Duration.millis(HOUR / 2))
      // Several failed attempts, spaced by growing, capped delays.
      const times: Array<number> = []
      for (let i = 0; i < 8; i++) {
        yield* Queue.take(fake.calls)
        times.push(yield* Clock.currentTimeMillis)
        if (i === 7) break
        yield* awaitSleeper
        const [next] = Chunk.toReadonlyArray(yield* TestClock.sleeps())
        yield* TestClock.setTime(next!)
      }
      const gaps = times.slice(1).map((t, i) => t - times[i]!)
      expect(gaps[0]).toBeGreaterThanOrEqual(400)
      expect(gaps[gaps.length - 1]).toBeGreaterThan(gaps[0]!)
      for (const gap of gaps) expect(gap).toBeLessThanOrEqual(36_000)
      expect((yield* identity.current).keyPem).toBe(first.keyPem)
      expect(yield* Effect.promise(() => counterValue(metrics.registry, "num_failed_outgoing_requests"))).toBe(8)
      expect(yield* Effect.promise(() => counterValue(metrics.registry, "num_outgoing_retries"))).toBe(7)
      // The CA comes back: the next retry succeeds, well before the old certificate expires.
      yield* Ref.set(fake.down, false)
      yield* awaitSleeper
      yield* TestClock.setTime(Chunk.toReadonlyArray(yield* TestClock.sleeps())[0]!)
      yield* Queue.take(fake.calls)
      const [second] = yield* Fiber.join(renewed)
      const now = yield* Clock.currentTimeMillis
      expect(now).toBeLessThan(first.notAfter.getTime())
      expect(second!.notAfter.getTime()).toBeGreaterThan(now + HOUR - 1000)
      expect(second!.notAfter.getTime()).toBeLessThanOrEqual(now + HOUR)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("renews with the current certificate when the token file is gone", () =>
    Effect.gen(function* () {
      const { fake, context, tokenPath } = yield* setup()
      const identity = Context_get(context)
      yield* Queue.take(fake.calls)
      const first = yield* identity.current
      yield* Effect.promise(() => rm(tokenPath))
      yield* awaitSleeper
      yield* TestClock.adjust(Duration.millis(HOUR / 2))
      const creds = yield* Queue.take(fake.calls)
      expect(creds.token).toBeUndefined()
      expect(creds.clientCert?.certPem).toBe(first.certChainPem)
      expect(creds.clientCert?.keyPem).toBe(first.keyPem)
    }),
  )

  it.scoped("writes OUTPUT_CERTS as one set and replaces it on renewal", () =>
    Effect.gen(function* () {
      const out = yield* tempDir()
      const { fake, context } = yield* setup({ outputDir: out })
      const identity = Context_get(context)
      yield* Queue.take(fake.calls)
      const first = yield* identity.current
      expect(yield* Effect.promise(() => readFile(join(out, CERT_FILES.key), "utf8"))).toBe(first.keyPem)
      expect(yield* Effect.promise(() => readFile(join(out, CERT_FILES.chain), "utf8"))).toBe(first.certChainPem)
      expect(yield* Effect.promise(() => readFile(join(out, CERT_FILES.root), "utf8"))).toBe(first.rootCertPem)
      expect(lstatSync(join(out, CERT_FILES.key)).isSymbolicLink()).toBe(true)
      const oldVersion = readlinkSync(join(out, "..data"))
      const renewed = yield* identity.changes.pipe(Stream.drop(1), Stream.take(1), Stream.runCollect, Effect.fork)
      yield* awaitSleeper
      yield* TestClock.adjust(Duration.millis(HOUR / 2))
      const [second] = yield* Fiber.join(renewed)
      expect(yield* Effect.promise(() => readFile(join(out, CERT_FILES.key), "utf8"))).toBe(second!.keyPem)
      expect(existsSync(join(out, oldVersion))).toBe(false)
      const reread = yield* readCertFiles(out)
      expect(reread.identity).toBe(ID)
      expect(reread.keyPem).toBe(second!.keyPem)
    }),
  )

  it.scoped("FILE_MOUNTED_CERTS reads the files and never calls the CA", () =>
    Effect.gen(function* () {
      const source = yield* setup()
      const cert = yield* Context_get(source.context).current
      const mounted = yield* tempDir()
      yield* writeCertFiles(mounted, cert)
      const { fake, context } = yield* setup({ mountedDir: mounted })
      expect((yield* Context_get(context).current).keyPem).toBe(cert.keyPem)
      expect(yield* Queue.size(fake.calls)).toBe(0)
    }),
  )
})

const Context_get = (context: Context.Context<WorkloadIdentity>) => Context.get(context, WorkloadIdentity)
