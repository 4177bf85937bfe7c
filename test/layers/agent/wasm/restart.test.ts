/**
 * A restarted fetcher re-indexes the modules a previous run left in its cache directory: a
 * verified file is served without a network call and counted in wasm_cache_entries, a file whose
 * bytes do not match its name is skipped (and fetched again), and a restored file is purged by
 * WASM_MODULE_EXPIRY counted from its mtime (TestClock); the unfinished downloads of a killed
 * run are removed.
 */
import { existsSync } from "node:fs"
import { mkdir, readFile, utimes, writeFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { type Context, Duration, Effect, TestClock } from "effect"
import { layer as metricsLayer } from "../../../../src/layers/metrics.js"
import { moduleFilePath } from "../../../../src/services/agent/wasm/cache-index.js"
import { sha256Hex } from "../../../../src/services/agent/wasm/checksum.js"
import { Metrics } from "../../../../src/services/metrics/metrics.js"
import { counter, makeFetcher, startServer, tempDir, waitUntil, wasmModule } from "./helpers.js"

const MODULE = wasmModule("left by a previous run")
const SHA = sha256Hex(MODULE)

/** Writes a file as a previous run would have, with the given mtime (ms since the epoch). */
const leaveFile = (path: string, bytes: Uint8Array, mtimeMs?: number) =>
  Effect.promise(async () => {
    await mkdir(dirname(path), { recursive: true })
    await writeFile(path, bytes)
    if (mtimeMs !== undefined) await utimes(path, mtimeMs / 1000, mtimeMs / 1000)
  })

describe("WasmFetcher after a restart", () => {
  it.scoped("removes the temporary files of downloads a killed run did not finish, and only those", () =>
    Effect.gen(function* () {
      const cacheDir = yield* tempDir("mesh-wasm-restart-")
      const stray = join(cacheDir, ".download-0123456789abcdef.tmp")
      const kept = join(cacheDir, "notes.tmp")
      yield* leaveFile(stray, Buffer.alloc(1024))
      yield* leaveFile(kept, Buffer.from("not ours"))
      yield* makeFetcher({ cacheDir })
      expect(existsSync(stray)).toBe(false)
      expect(existsSync(kept)).toBe(true)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("serves a module the previous run downloaded without a network request", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const server = yield* startServer((_req, res) => void res.end(MODULE))
      const cacheDir = yield* tempDir("mesh-wasm-restart-")
      const pinnedUrl = server.url("/pinned.wasm")
      const unpinnedUrl = server.url("/unpinned.wasm")
      const pinned = moduleFilePath(cacheDir, pinnedUrl, SHA)
      const unpinned = moduleFilePath(cacheDir, unpinnedUrl, SHA)
      yield* leaveFile(pinned, MODULE)
      yield* leaveFile(unpinned, MODULE)

      const { fetcher } = yield* makeFetcher({ cacheDir })
      expect(yield* counter(metrics, "wasm_cache_entries")).toBe(2)
      expect(yield* fetcher.fetch({ url: pinnedUrl, sha256: SHA, pullPolicy: "" })).toBe(pinned)
      expect(server.requests()).toBe(0)
      expect(yield* counter(metrics, "wasm_cache_lookup_count", { hit: "true" })).toBe(1)

      // Without a pinned checksum nothing says which file the URL resolves to: it downloads once,
      // lands on the restored entry (no new one), and is remembered from then on.
      expect(yield* fetcher.fetch({ url: unpinnedUrl, pullPolicy: "" })).toBe(unpinned)
      expect(yield* fetcher.fetch({ url: unpinnedUrl, pullPolicy: "" })).toBe(unpinned)
      expect(server.requests("/unpinned.wasm")).toBe(1)
      expect(yield* counter(metrics, "wasm_cache_entries")).toBe(2)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("skips a file whose bytes do not match its name, and strays, then fetches again", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const server = yield* startServer((_req, res) => void res.end(MODULE))
      const cacheDir = yield* tempDir("mesh-wasm-restart-")
      const url = server.url("/filter.wasm")
      const corrupt = moduleFilePath(cacheDir, url, SHA)
      yield* leaveFile(corrupt, MODULE.subarray(0, MODULE.length - 3))
      // A valid module named by another checksum (as an OCI pull is, by its manifest digest).
      const unverifiable = moduleFilePath(cacheDir, "oci://ghcr.io/org/filter", "cd".repeat(32))
      yield* leaveFile(unverifiable, wasmModule("oci layer"))
      const stray = join(dirname(corrupt), `${SHA}.wasm.abc123.tmp`)
      yield* leaveFile(stray, MODULE)

      const { fetcher } = yield* makeFetcher({ cacheDir })
      expect(yield* counter(metrics, "wasm_cache_entries")).toBe(0)
      expect(yield* fetcher.fetch({ url, sha256: SHA, pullPolicy: "" })).toBe(corrupt)
      expect(server.requests()).toBe(1)
      expect(yield* Effect.promise(() => readFile(corrupt))).toEqual(MODULE)
      expect(yield* counter(metrics, "wasm_cache_entries")).toBe(1)
      // Skipped files are left alone, not deleted.
      expect(existsSync(unverifiable)).toBe(true)
      expect(existsSync(stray)).toBe(true)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("purges restored modules WASM_MODULE_EXPIRY after their mtime", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const cacheDir = yield* tempDir("mesh-wasm-restart-")
      const start = Duration.toMillis(Duration.hours(3))
      yield* TestClock.setTime(start)
      const oldModule = wasmModule("old")
      const recentModule = wasmModule("recent")
      const old = moduleFilePath(cacheDir, "https://e.com/old.wasm", sha256Hex(oldModule))
      const recent = moduleFilePath(cacheDir, "https://e.com/recent.wasm", sha256Hex(recentModule))
      yield* leaveFile(old, oldModule, 0)
      yield* leaveFile(recent, recentModule, start - Duration.toMillis(Duration.minutes(5)))

      yield* makeFetcher({ cacheDir, moduleExpiry: Duration.hours(1), purgeInterval: Duration.minutes(10) })
      expect(yield* counter(metrics, "wasm_cache_entries")).toBe(2)

      // First check (3h10m): the old one has been idle 3h10m, the recent one 15m.
      yield* TestClock.adjust("10 minutes")
      yield* waitUntil(() => !existsSync(old))
      expect(existsSync(recent)).toBe(true)
      yield* waitUntil(async () => (await currentEntries(metrics)) === 1)

      // At 4h0m it has been idle 65m > 1h.
      yield* TestClock.adjust("50 minutes")
      yield* waitUntil(() => !existsSync(recent))
      yield* waitUntil(async () => (await currentEntries(metrics)) === 0)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})

const currentEntries = async (metrics: Context.Tag.Service<Metrics>) =>
  (await metrics.registry.getSingleMetric("wasm_cache_entries")?.get())?.values[0]?.value
