/**
 * The file secrets the agent's SDS serves (`file-cert:`, `file-root:`): read when first asked
 * for, rotated when a watch (a `..data` symlink swap, a file rewritten) or the poll sees the
 * files change, refused with a log line when missing, oversized, malformed or past the file
 * bound, and let go when nobody asks any more. File events are real; the poll and the debounce
 * run on the TestClock.
 */
import { mkdir, mkdtemp, rename, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Logger, Queue, TestClock } from "effect"
import {
  DEFAULT_FILE_SECRETS,
  type FileSecretSettings,
  makeFileSecrets,
} from "../../../../src/layers/agent/sds/file-secrets.js"
import { layer as metricsLayer } from "../../../../src/layers/metrics.js"
import { fileCertName, fileRootName } from "../../../../src/services/credentials/file-secret-name.js"
import { Metrics } from "../../../../src/services/metrics/metrics.js"
import { selfSigned } from "../../../services/gateway-api/tls-fixtures.js"

type Pair = { cert: string; key: string }
const asFile = (pair: Pair): Pair => ({ cert: `${pair.cert.trimEnd()}\n`, key: `${pair.key.trimEnd()}\n` })
const pair = (name: string) => Effect.promise(() => selfSigned(name)).pipe(Effect.map(asFile))

const tempDir = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "mesh-sds-files-"))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true })),
)

/** File events come in real time while the TestClock stands still: bound waits with a real timer. */
const within10s = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.raceFirst(
    effect,
    Effect.promise(() => new Promise((r) => setTimeout(r, 10_000))).pipe(
      Effect.zipRight(Effect.dieMessage("nothing within 10s")),
    ),
  )

/** A store with settings, its log lines, and a counter of listener calls per name. */
const store = (overrides: Partial<FileSecretSettings> = {}) =>
  Effect.gen(function* () {
    const logs: Array<string> = []
    const logger = Logger.make(({ message }) => {
      logs.push(Array.isArray(message) ? message.join(" ") : String(message))
    })
    const metricsContext = yield* Layer.build(metricsLayer("test"))
    const files = yield* makeFileSecrets({
      ...DEFAULT_FILE_SECRETS,
      debounce: Duration.zero,
      pollInterval: Duration.hours(1),
      ...overrides,
    }).pipe(
      Effect.provide(Layer.merge(Layer.succeedContext(metricsContext), Logger.replace(Logger.defaultLogger, logger))),
    )
    const metrics = metricsContext.unsafeMap.get(Metrics.key) as Metrics["Type"]
    const counter = async (name: string) => (await metrics.registry.getSingleMetric(name)!.get()).values[0]?.value ?? 0
    const changes = yield* Queue.unbounded<string>()
    const listener = (name: string) => () => Queue.unsafeOffer(changes, name)
    return { files, logs, changes, listener, counter }
  })

/** Lays `pair` out as the orchestrator mounts a Secret: files through a `..data` symlink to a version directory. */
const publish = (dir: string, version: string, p: Pair) =>
  Effect.promise(async () => {
    await mkdir(join(dir, version))
    await writeFile(join(dir, version, "tls.crt"), p.cert)
    await writeFile(join(dir, version, "tls.key"), p.key)
    await symlink(version, join(dir, "..data_tmp"))
    await rename(join(dir, "..data_tmp"), join(dir, "..data"))
    for (const f of ["tls.crt", "tls.key"]) await symlink(join("..data", f), join(dir, f)).catch(() => undefined)
  })

const certOf = (secret: unknown) =>
  (
    secret as { tls_certificate: { certificate_chain: { inline_bytes: Buffer } } }
  ).tls_certificate.certificate_chain.inline_bytes.toString()

describe("file secrets", () => {
  it.scoped(
    "reads a file-cert: when first asked for and pushes the rotation an orchestrator-style symlink swap makes",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const [a, b] = [yield* pair("a.example.com"), yield* pair("b.example.com")]
        yield* publish(dir, "..v1", a)
        const { files, changes, listener, logs, counter } = yield* store()
        const name = fileCertName(join(dir, "tls.crt"), join(dir, "tls.key"))
        expect(files.retain(name, listener("one"))).toBe(true)
        expect(yield* within10s(Queue.take(changes))).toBe("one")
        const first = files.current(name)!
        expect(certOf(first.secret)).toBe(a.cert)
        expect(logs.find((l) => l.includes("serving"))).toMatch(
          /SDS: serving file-cert:.*tls\.crt~.*tls\.key from files \(certificate valid until 2034-01-01T00:00:00\.000Z, version file-[0-9a-f]{16}\)/,
        )
        // A second stream asking for the same name shares the entry: no second read.
        expect(files.retain(name, listener("two"))).toBe(true)
        expect(files.followed()).toEqual({ names: 1, files: 2, directories: 1 })
        yield* publish(dir, "..v2", b)
        const told = [yield* within10s(Queue.take(changes)), yield* within10s(Queue.take(changes))]
        expect(told.sort()).toEqual(["one", "two"])
        const rotated = files.current(name)!
        expect(certOf(rotated.secret)).toBe(b.cert)
        expect(rotated.version).not.toBe(first.version)
        expect(logs.some((l) => l.startsWith("SDS: rotated file-cert:"))).toBe(true)
        expect(yield* Effect.promise(() => counter("num_file_secret_loads_total"))).toBe(2)
      }),
  )

  it.scoped("a missing file: nothing served, one log line, no crash; served once the poll finds it", () =>
    Effect.gen(function* () {
      const base = yield* tempDir
      // Its directory does not exist either: no watch can be set, only the poll finds the files.
      const dir = join(base, "later")
      const { files, changes, listener, logs, counter } = yield* store({ pollInterval: Duration.seconds(5) })
      const name = fileRootName(join(dir, "ca.crt"))
      expect(files.retain(name, listener("root"))).toBe(true)
      yield* within10s(
        Effect.gen(function* () {
          while (!logs.some((l) => l.includes("does not exist")))
            yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
        }),
      )
      expect(logs.filter((l) => l.includes("not served"))).toEqual([
        `SDS: ${name} not served: ${join(dir, "ca.crt")} does not exist`,
      ])
      expect(files.current(name)).toBeUndefined()
      expect(yield* Effect.promise(() => counter("num_file_watcher_failures_total"))).toBe(1)
      expect(yield* Effect.promise(() => counter("num_file_secret_failures_total"))).toBe(1)
      // Polls while it is still missing: not read again, not logged again.
      yield* TestClock.adjust(Duration.seconds(5))
      yield* TestClock.adjust(Duration.seconds(5))
      expect(logs.filter((l) => l.includes("not served"))).toHaveLength(1)
      const a = yield* pair("ca.example.com")
      yield* Effect.promise(async () => {
        await mkdir(dir)
        await writeFile(join(dir, "ca.crt"), a.cert)
      })
      yield* TestClock.adjust(Duration.seconds(5))
      expect(yield* within10s(Queue.take(changes))).toBe("root")
      const ctx = files.current(name)!.secret.validation_context as { trusted_ca: { inline_bytes: Buffer } }
      expect(ctx.trusted_ca.inline_bytes.toString()).toBe(a.cert)
    }),
  )

  it.scoped("a half-rotated pair keeps the version served; the finished rotation is served", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const [a, b] = [yield* pair("a.example.com"), yield* pair("b.example.com")]
      yield* Effect.promise(async () => {
        await writeFile(join(dir, "c.pem"), a.cert)
        await writeFile(join(dir, "k.pem"), a.key)
      })
      const { files, changes, listener, logs } = yield* store({ pollInterval: Duration.seconds(5) })
      const name = fileCertName(join(dir, "c.pem"), join(dir, "k.pem"))
      files.retain(name, listener("x"))
      yield* within10s(Queue.take(changes))
      const served = files.current(name)!
      // Only the certificate is replaced: the key no longer matches.
      yield* Effect.promise(() => writeFile(join(dir, "c.pem"), b.cert))
      yield* within10s(
        Effect.gen(function* () {
          while (!logs.some((l) => l.includes("does not match")))
            yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
        }),
      )
      expect(logs.find((l) => l.includes("does not match"))).toContain(`; still serving version ${served.version}`)
      expect(files.current(name)).toEqual(served)
      yield* Effect.promise(() => writeFile(join(dir, "k.pem"), b.key))
      expect(yield* within10s(Queue.take(changes))).toBe("x")
      expect(certOf(files.current(name)!.secret)).toBe(b.cert)
    }),
  )

  it.scoped(
    "refuses malformed names, oversized files and names past the file bound, and lets files go when released",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const a = yield* pair("a.example.com")
        yield* Effect.promise(async () => {
          await writeFile(join(dir, "c.pem"), a.cert)
          await writeFile(join(dir, "k.pem"), a.key)
          await writeFile(join(dir, "big.pem"), a.cert.repeat(20))
        })
        const { files, changes, listener, logs } = yield* store({ maxFiles: 3, maxBytes: 4096 })
        expect(files.retain("file-cert:/only-one-path", listener("bad"))).toBe(false)
        expect(logs.at(-1)).toBe(
          "SDS: file-cert:/only-one-path not served: not a well-formed file secret name (file-cert:<cert>~<key> or file-root:<ca>)",
        )
        const pairName = fileCertName(join(dir, "c.pem"), join(dir, "k.pem"))
        const onPair = listener("pair")
        expect(files.retain(pairName, onPair)).toBe(true)
        yield* within10s(Queue.take(changes))
        // A file already followed costs nothing more.
        const onRoot = listener("root")
        expect(files.retain(fileRootName(join(dir, "c.pem")), onRoot)).toBe(true)
        const big = fileRootName(join(dir, "big.pem"))
        const onBig = listener("big")
        expect(files.retain(big, onBig)).toBe(true)
        expect(files.followed()).toEqual({ names: 3, files: 3, directories: 1 })
        expect(files.retain(fileRootName(join(dir, "fourth.pem")), listener("fourth"))).toBe(false)
        expect(logs.some((l) => l.includes("at most 3 (MESH_SDS_MAX_FILES)"))).toBe(true)
        yield* within10s(
          Effect.gen(function* () {
            while (!logs.some((l) => l.includes("larger than")))
              yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
          }),
        )
        expect(logs.find((l) => l.includes("larger than"))).toBe(
          `SDS: ${big} not served: ${join(dir, "big.pem")} is larger than 4096 bytes (MESH_SDS_FILE_MAX_BYTES)`,
        )
        expect(files.current(big)).toBeUndefined()
        files.release(big, onBig)
        files.release(fileRootName(join(dir, "c.pem")), onRoot)
        expect(files.followed()).toEqual({ names: 1, files: 2, directories: 1 })
        // Another listener's release does not drop a name still asked for.
        const other = listener("other")
        files.release(pairName, other)
        expect(files.current(pairName)).toBeDefined()
        files.release(pairName, onPair)
        expect(files.followed()).toEqual({ names: 0, files: 0, directories: 0 })
        expect(files.current(pairName)).toBeUndefined()
      }),
  )
})
