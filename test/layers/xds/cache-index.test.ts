import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import { clearCacheIndexEvery } from "../../../src/layers/xds/cache-index.js"

const settle = Effect.repeatN(Effect.yieldNow(), 10)

describe("xDS cache index clearing loop", () => {
  it.scoped("clears the index once per PILOT_XDS_CACHE_INDEX_CLEAR_INTERVAL", () =>
    Effect.gen(function* () {
      let clears = 0
      yield* clearCacheIndexEvery({ clearIndex: () => ++clears }, Duration.seconds(5))
      yield* settle
      expect(clears).toBe(0)
      yield* TestClock.adjust("4999 millis")
      yield* settle
      expect(clears).toBe(0)
      yield* TestClock.adjust("1 millis")
      yield* settle
      expect(clears).toBe(1)
      yield* TestClock.adjust("10 seconds")
      yield* settle
      expect(clears).toBe(3)
    }),
  )

  it.scoped("an interval of 0 (or none) never clears", () =>
    Effect.gen(function* () {
      let clears = 0
      yield* clearCacheIndexEvery({ clearIndex: () => ++clears }, Duration.zero)
      yield* clearCacheIndexEvery({ clearIndex: () => ++clears }, undefined)
      yield* TestClock.adjust("1 hour")
      yield* settle
      expect(clears).toBe(0)
    }),
  )
})
