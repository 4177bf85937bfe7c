import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Scope, TestClock } from "effect"
import { type HeapGrowthHost, layerWith } from "../../../src/layers/memory/heap-growth.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { MemoryConfig } from "../../../src/services/memory/memory-config.js"
import { Metrics } from "../../../src/services/metrics/metrics.js"

const MiB = 2 ** 20

const fakeHost = (cgroup?: string) => {
  const state = { rss: 100 * MiB, applied: [] as Array<number> }
  const host: HeapGrowthHost = {
    rssBytes: () => state.rss,
    setGrowthPercent: (percent) => state.applied.push(percent),
    cgroupLimitText: () => cgroup,
  }
  return { state, host }
}

const gauge = (name: string) =>
  Effect.flatMap(Metrics, (metrics) => Effect.promise(() => metrics.registry.getSingleMetricAsString(name)))

const start = (host: HeapGrowthHost, overrides: Partial<MemoryConfig["Type"]>) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(
      layerWith(host).pipe(Layer.provideMerge(Layer.merge(MemoryConfig.layer(overrides), metricsLayer("test")))),
      scope,
    )
    return { scope, context }
  })

describe("heap growth layer", () => {
  it.effect("applies the configured factor at start and, without a limit, never samples", () =>
    Effect.gen(function* () {
      const { state, host } = fakeHost("max\n")
      const { scope } = yield* start(host, {})
      state.rss = 10_000 * MiB
      yield* TestClock.adjust("10 seconds")
      expect(state.applied).toEqual([100])
      yield* Scope.close(scope, Exit.void)
    }),
  )

  it.effect("lowers the factor while RSS is over the cgroup-derived limit and restores it under the margin", () =>
    Effect.gen(function* () {
      // A 500 MiB cgroup: the soft limit is 450 MiB.
      const { state, host } = fakeHost(String(500 * MiB))
      const { scope, context } = yield* start(host, {})
      yield* TestClock.adjust("1 second")
      expect(state.applied).toEqual([100])
      state.rss = 460 * MiB
      yield* TestClock.adjust("250 millis")
      expect(state.applied).toEqual([100, 10])
      // Inside the margin (405..450 MiB): unchanged, and not re-applied on every sample.
      state.rss = 420 * MiB
      yield* TestClock.adjust("2 seconds")
      expect(state.applied).toEqual([100, 10])
      state.rss = 400 * MiB
      yield* TestClock.adjust("250 millis")
      expect(state.applied).toEqual([100, 10, 100])
      const text = yield* gauge("mesh_memory_soft_limit_bytes").pipe(Effect.provide(context))
      expect(text).toContain(`mesh_memory_soft_limit_bytes ${Math.floor(450 * MiB)}`)
      yield* Scope.close(scope, Exit.void)
    }),
  )

  it.effect("fails at start on a bad MESH_MEMORY_LIMIT or a negative growth", () =>
    Effect.gen(function* () {
      const bad = yield* Effect.exit(start(fakeHost().host, { MESH_MEMORY_LIMIT: "lots" }))
      expect(Exit.isFailure(bad) && String(Exit.isFailure(bad) ? bad.cause : "")).toContain("MESH_MEMORY_LIMIT")
      const negative = yield* Effect.exit(start(fakeHost().host, { MESH_HEAP_GROWTH_PERCENT: -5 }))
      expect(Exit.isFailure(negative)).toBe(true)
    }),
  )
})
