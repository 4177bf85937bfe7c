/**
 * Spec 001 rule 5 under TestClock: a module unused for WASM_MODULE_EXPIRY is deleted at the next
 * WASM_PURGE_INTERVAL check, a use in between keeps it, and a purged module is fetched again.
 */
import { existsSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import { layer as metricsLayer } from "../../../../src/layers/metrics.js"
import { Metrics } from "../../../../src/services/metrics/metrics.js"
import { counter, makeFetcher, startServer, waitUntil, wasmModule } from "./helpers.js"

describe("WasmFetcher purge", () => {
  it.scoped("deletes modules unused for the expiry at the purge interval", () =>
    Effect.gen(function* () {
      const metrics = yield* Metrics
      const server = yield* startServer((_req, res) => void res.end(wasmModule("purged")))
      const { fetcher } = yield* makeFetcher({
        moduleExpiry: Duration.hours(1),
        purgeInterval: Duration.minutes(10),
      })
      const request = { url: server.url("/purged.wasm"), pullPolicy: "IfNotPresent" as const }
      const path = yield* fetcher.fetch(request)

      // Used again at 30m: at the 80m check it has been idle 50m, so it stays.
      yield* TestClock.adjust("30 minutes")
      expect(yield* fetcher.fetch(request)).toBe(path)
      yield* TestClock.adjust("50 minutes")
      expect(existsSync(path)).toBe(true)
      expect(yield* counter(metrics, "wasm_cache_entries")).toBe(1)

      // At the 100m check it has been idle 70m > 1h: gone, file and entry.
      yield* TestClock.adjust("20 minutes")
      yield* waitUntil(() => !existsSync(path))
      yield* waitUntil(
        async () => (await metrics.registry.getSingleMetric("wasm_cache_entries")?.get())?.values[0]?.value === 0,
      )
      expect(server.requests()).toBe(1)

      // The next request pulls it again.
      expect(yield* fetcher.fetch(request)).toBe(path)
      expect(existsSync(path)).toBe(true)
      expect(server.requests()).toBe(2)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scoped("checks only every purge interval", () =>
    Effect.gen(function* () {
      const server = yield* startServer((_req, res) => void res.end(wasmModule("interval")))
      const { fetcher } = yield* makeFetcher({
        moduleExpiry: Duration.seconds(30),
        purgeInterval: Duration.hours(1),
      })
      const request = { url: server.url("/m.wasm"), pullPolicy: "" as const }
      const path = yield* fetcher.fetch(request)
      // Expired after 30s, but not checked before the hour: still served from the cache.
      yield* TestClock.adjust("59 minutes")
      expect(yield* fetcher.fetch(request)).toBe(path)
      expect(server.requests()).toBe(1)
      yield* TestClock.adjust("1 minute")
      yield* waitUntil(() => !existsSync(path))
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})
