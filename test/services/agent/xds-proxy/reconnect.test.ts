/** When the xDS proxy reopens its upstream stream, under TestClock. */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Duration, Effect, Fiber, Ref, Schedule, TestClock } from "effect"
import { retrySchedule } from "../../../../src/services/agent/identity/identity.js"
import { superviseUpstream, type UpstreamOutcome } from "../../../../src/services/agent/xds-proxy/reconnect.js"

/** An attempt that plays `outcomes` in turn (then ends the downstream), recording when each started. */
const scripted = (outcomes: ReadonlyArray<UpstreamOutcome>) =>
  Effect.gen(function* () {
    const starts = yield* Ref.make<ReadonlyArray<number>>([])
    const attempt = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const done = yield* Ref.modify(starts, (s) => [s.length, [...s, now]])
      return outcomes[done] ?? ("downstream-ended" as const)
    })
    return { starts: Ref.get(starts), attempt }
  })

// 100 ms doubling, capped at 400 ms, no jitter: the delays can be read off exactly
const backoff = Schedule.exponential(Duration.millis(100), 2).pipe(Schedule.union(Schedule.spaced("400 millis")))

describe("superviseUpstream", () => {
  it.effect("backs off between failed connections, doubling up to the cap", () =>
    Effect.gen(function* () {
      const { starts, attempt } = yield* scripted(["failed", "failed", "failed", "failed", "failed"])
      const fiber = yield* Effect.fork(superviseUpstream(attempt, backoff))
      yield* TestClock.adjust("99 millis")
      expect(yield* starts).toEqual([0])
      yield* TestClock.adjust("1 millis")
      expect(yield* starts).toEqual([0, 100])
      yield* TestClock.adjust("2 seconds")
      yield* Fiber.join(fiber)
      // delays 100, 200, 400, 400 (capped), 400
      expect(yield* starts).toEqual([0, 100, 300, 700, 1100, 1500])
    }),
  )

  it.effect("reopens at once after a stream that answered, and starts the backoff over", () =>
    Effect.gen(function* () {
      const { starts, attempt } = yield* scripted(["failed", "failed", "answered", "failed", "answered", "answered"])
      const fiber = yield* Effect.fork(superviseUpstream(attempt, backoff))
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber)
      // failed → 100 → failed → 200 → answered → at once → failed → 100 (fresh) → answered → at once ×2
      expect(yield* starts).toEqual([0, 100, 300, 300, 400, 400, 400])
    }),
  )

  it.effect("stops as soon as the downstream has ended, without waiting", () =>
    Effect.gen(function* () {
      const { starts, attempt } = yield* scripted(["downstream-ended"])
      yield* superviseUpstream(attempt, backoff)
      expect(yield* starts).toEqual([0])
    }),
  )

  it.effect("a backoff schedule that ends starts over instead of dropping the downstream", () =>
    Effect.gen(function* () {
      const { starts, attempt } = yield* scripted(["failed", "failed", "failed", "failed"])
      const fiber = yield* Effect.fork(
        superviseUpstream(attempt, Schedule.spaced("50 millis").pipe(Schedule.intersect(Schedule.recurs(1)))),
      )
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber)
      expect((yield* starts).length).toBe(5)
      expect((yield* starts)[1]).toBe(50)
    }),
  )

  it.effect("with the agent's jittered schedule, waits stay within the cap while the server is away", () =>
    Effect.gen(function* () {
      const { starts, attempt } = yield* scripted(Array.from({ length: 12 }, () => "failed" as const))
      const policy = { base: Duration.millis(100), max: Duration.seconds(1) }
      const fiber = yield* Effect.fork(superviseUpstream(attempt, retrySchedule(policy)))
      yield* TestClock.adjust("1 minute")
      yield* Fiber.join(fiber)
      const times = yield* starts
      const gaps = times.slice(1).map((t, i) => t - times[i]!)
      expect(gaps.length).toBe(12)
      // jitter moves each delay by up to ±20 %; the cap holds the later ones near 1 s
      for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(80)
      for (const gap of gaps) expect(gap).toBeLessThanOrEqual(1200)
      expect(gaps[0]).toBeLessThanOrEqual(120)
      expect(gaps.at(-1)).toBeGreaterThanOrEqual(800)
    }),
  )
})
