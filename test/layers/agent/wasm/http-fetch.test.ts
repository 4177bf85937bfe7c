/**
 * The WasmFetcher against a real loopback HTTP server: download, sha256 check, mismatch, cache hits
 * without network, one pull for concurrent requests, retries, the Always/resource-version rule
 * and the metrics.
 */
import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { gzipSync } from "node:zlib"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber } from "effect"
import { layer as metricsLayer } from "../../../../src/layers/metrics.js"
import { sha256Hex } from "../../../../src/services/agent/wasm/checksum.js"
import { Metrics } from "../../../../src/services/metrics/metrics.js"
import { counter, makeFetcher, startServer, tarOf, waitUntil, wasmModule } from "./helpers.js"

const MODULE = wasmModule("http module")
const SHA = sha256Hex(MODULE)

describe("WasmFetcher over http", () => {
  it.scoped("downloads, verifies the sha256, then serves the cache with no network call", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const server = yield* startServer((_req, res) => void res.end(MODULE))
      const { fetcher, cacheDir } = yield* makeFetcher()
      const request = { url: server.url("/filter.wasm"), sha256: SHA, pullPolicy: "" as const }

      const path = yield* fetcher.fetch(request)
      expect(path.startsWith(cacheDir)).toBe(true)
      expect(yield* Effect.promise(() => readFile(path))).toEqual(MODULE)
      expect(server.requests("/filter.wasm")).toBe(1)

      expect(yield* fetcher.fetch(request)).toBe(path)
      expect(yield* fetcher.fetch({ url: request.url, pullPolicy: "", resourceVersion: "9" })).toBe(path)
      expect(server.requests()).toBe(1)
      expect(yield* counter(metrics, "wasm_cache_lookup_count", { hit: "false" })).toBe(1)
      expect(yield* counter(metrics, "wasm_cache_lookup_count", { hit: "true" })).toBe(2)
      expect(yield* counter(metrics, "wasm_remote_fetch_count", { result: "success" })).toBe(1)
      expect(yield* counter(metrics, "wasm_cache_entries")).toBe(1)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("fails on a sha256 mismatch, writes nothing and counts checksum_mismatched", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const server = yield* startServer((_req, res) => void res.end(MODULE))
      const { fetcher } = yield* makeFetcher()
      const url = server.url("/filter.wasm")
      const error = yield* Effect.flip(fetcher.fetch({ url, sha256: "00".repeat(32), pullPolicy: "" }))
      expect(error._tag).toBe("WasmFetchError")
      expect(error.url).toBe(url)
      expect(error.reason).toContain(`checksum ${SHA}`)
      expect(yield* counter(metrics, "wasm_remote_fetch_count", { result: "checksum_mismatched" })).toBe(1)
      expect(yield* counter(metrics, "wasm_cache_entries")).toBe(0)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("rejects bytes that are not Wasm, and does not retry a 404", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const server = yield* startServer((req, res) => {
        if (req.url === "/text") res.end("<html>not wasm</html>")
        else {
          res.statusCode = 404
          res.end()
        }
      })
      const { fetcher } = yield* makeFetcher()
      const notWasm = yield* Effect.flip(fetcher.fetch({ url: server.url("/text"), pullPolicy: "" }))
      expect(notWasm.reason).toContain("not a Wasm module")
      const missing = yield* Effect.flip(fetcher.fetch({ url: server.url("/missing"), pullPolicy: "" }))
      expect(missing.reason).toContain("404")
      expect(server.requests("/missing")).toBe(1)
      expect(yield* counter(metrics, "wasm_remote_fetch_count", { result: "fetch_failure" })).toBe(1)
      expect(yield* counter(metrics, "wasm_remote_fetch_count", { result: "download_failure" })).toBe(1)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("retries 503 answers up to the attempt limit", () =>
    Effect.gen(function* () {
      let failuresLeft = 2
      const server = yield* startServer((_req, res) => {
        if (failuresLeft-- > 0) {
          res.statusCode = 503
          res.end()
        } else res.end(MODULE)
      })
      const { fetcher } = yield* makeFetcher({ maxAttempts: 3 })
      yield* fetcher.fetch({ url: server.url("/flaky.wasm"), sha256: SHA, pullPolicy: "" })
      expect(server.requests()).toBe(3)

      failuresLeft = 10
      const limited = yield* makeFetcher({ maxAttempts: 2 })
      const error = yield* Effect.flip(limited.fetcher.fetch({ url: server.url("/down.wasm"), pullPolicy: "" }))
      expect(error.reason).toContain("503")
      expect(server.requests("/down.wasm")).toBe(2)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("times out a request that gets no answer", () =>
    Effect.gen(function* () {
      const server = yield* startServer(() => undefined)
      const { fetcher } = yield* makeFetcher({ maxAttempts: 1, requestTimeout: Duration.millis(200) })
      const error = yield* Effect.flip(fetcher.fetch({ url: server.url("/hang.wasm"), pullPolicy: "" }))
      expect(error.reason).toContain("no answer within")
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("unboxes a module served as tar.gz", () =>
    Effect.gen(function* () {
      const archive = gzipSync(yield* Effect.promise(() => tarOf({ "filter.wasm": MODULE })))
      const server = yield* startServer((_req, res) => void res.end(archive))
      const { fetcher } = yield* makeFetcher()
      const path = yield* fetcher.fetch({ url: server.url("/filter.tar.gz"), sha256: SHA, pullPolicy: "" })
      expect(yield* Effect.promise(() => readFile(path))).toEqual(MODULE)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("pulls once for concurrent requests of the same module", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      let release: () => void = () => undefined
      const released = new Promise<void>((r) => {
        release = r
      })
      const server = yield* startServer(async (_req, res) => {
        await released
        res.end(MODULE)
      })
      const { fetcher } = yield* makeFetcher()
      const request = { url: server.url("/shared.wasm"), pullPolicy: "IfNotPresent" as const }
      const all = yield* Effect.all(
        Array.from({ length: 5 }, () => fetcher.fetch(request)),
        {
          concurrency: "unbounded",
        },
      ).pipe(Effect.fork)
      // Every caller has looked the module up (and missed) before the server answers.
      yield* waitUntil(async () => server.requests() === 1)
      yield* Effect.iterate(0, {
        while: (misses) => misses < 5,
        body: () => Effect.zipLeft(counter(metrics, "wasm_cache_lookup_count", { hit: "false" }), Effect.yieldNow()),
      })
      release()
      const paths = yield* Fiber.join(all)
      expect(new Set(paths).size).toBe(1)
      expect(server.requests()).toBe(1)
      expect(yield* counter(metrics, "wasm_remote_fetch_count", { result: "success" })).toBe(1)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("with Always, pulls again when the resource version changes and not otherwise", () =>
    Effect.gen(function* () {
      let version = "one"
      const server = yield* startServer((_req, res) => void res.end(wasmModule(version)))
      const { fetcher } = yield* makeFetcher()
      const request = { url: server.url("/moving.wasm"), pullPolicy: "Always" as const, resourceName: "ns/p" }
      const first = yield* fetcher.fetch({ ...request, resourceVersion: "1" })
      expect(yield* fetcher.fetch({ ...request, resourceVersion: "1" })).toBe(first)
      expect(server.requests()).toBe(1)
      version = "two"
      const second = yield* fetcher.fetch({ ...request, resourceVersion: "2" })
      expect(server.requests()).toBe(2)
      expect(second).not.toBe(first)
      expect(yield* Effect.promise(() => readFile(second))).toEqual(wasmModule("two"))
      // IfNotPresent reuses whatever the URL last resolved to, whatever the version.
      expect(yield* fetcher.fetch({ ...request, pullPolicy: "IfNotPresent", resourceVersion: "3" })).toBe(second)
      expect(server.requests()).toBe(2)
      expect(existsSync(first)).toBe(true)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("fails on an unsupported URL without any network call", () =>
    Effect.gen(function* () {
      const { fetcher } = yield* makeFetcher()
      const exit = yield* Effect.exit(fetcher.fetch({ url: "ftp://example.com/a.wasm", pullPolicy: "" }))
      expect(Exit.isFailure(exit)).toBe(true)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})
