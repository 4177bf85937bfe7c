/** The shutdown countdown every listener of a program shares (under TestClock). */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Option, TestClock } from "effect"
import {
  closeAtExpiry,
  drainBudget,
  makeShutdownDeadline,
  ShutdownDeadline,
} from "../../../src/services/lifecycle/shutdown-deadline.js"

describe("shutdown deadline", () => {
  it.effect("counts from begin, and a later begin keeps the first start", () =>
    Effect.gen(function* () {
      const deadline = yield* makeShutdownDeadline(Duration.seconds(10))
      yield* TestClock.adjust("1 hour")
      yield* deadline.begin
      yield* TestClock.adjust("3 seconds")
      yield* deadline.begin
      expect(Duration.toMillis(yield* deadline.remaining)).toBe(7000)
      yield* TestClock.adjust("8 seconds")
      expect(Duration.toMillis(yield* deadline.remaining)).toBe(0)
    }),
  )

  it.effect("starts when first asked if no signal began it", () =>
    Effect.gen(function* () {
      const deadline = yield* makeShutdownDeadline(Duration.seconds(2))
      yield* TestClock.adjust("5 seconds")
      expect(Duration.toMillis(yield* deadline.remaining)).toBe(2000)
      yield* TestClock.adjust("500 millis")
      expect(Duration.toMillis(yield* deadline.remaining)).toBe(1500)
    }),
  )

  it.effect("expires only once begun, at the end of the countdown", () =>
    Effect.gen(function* () {
      const deadline = yield* makeShutdownDeadline(Duration.seconds(10))
      const expired = yield* Effect.fork(deadline.expired)
      yield* TestClock.adjust("1 minute")
      expect(Option.isNone(yield* Fiber.poll(expired))).toBe(true)
      yield* deadline.begin
      yield* TestClock.adjust("9999 millis")
      expect(Option.isNone(yield* Fiber.poll(expired))).toBe(true)
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(expired)
    }),
  )

  it.effect("an infinite duration never runs out", () =>
    Effect.gen(function* () {
      const deadline = yield* makeShutdownDeadline(Duration.infinity)
      yield* deadline.begin
      yield* TestClock.adjust("1000 days")
      expect(Duration.isFinite(yield* deadline.remaining)).toBe(false)
    }),
  )

  it.effect("a listener's drain time is the countdown's remainder, or its own fallback without one", () =>
    Effect.gen(function* () {
      const fallback = yield* drainBudget(Duration.seconds(5))
      expect(Duration.toMillis(yield* fallback)).toBe(5000)
      const deadline = yield* makeShutdownDeadline(Duration.seconds(10))
      const counted = yield* drainBudget(Duration.seconds(5)).pipe(Effect.provideService(ShutdownDeadline, deadline))
      yield* deadline.begin
      yield* TestClock.adjust("4 seconds")
      // Asked outside the context it was resolved in, as a finalizer does.
      expect(Duration.toMillis(yield* counted)).toBe(6000)
    }),
  )

  it.scoped("closeAtExpiry runs at the end of the countdown while its scope is open, not after it closed", () =>
    Effect.gen(function* () {
      const deadline = yield* makeShutdownDeadline(Duration.seconds(3))
      const closed: Array<string> = []
      const watch = (name: string) =>
        closeAtExpiry(Effect.sync(() => closed.push(name))).pipe(Effect.provideService(ShutdownDeadline, deadline))
      yield* watch("open")
      yield* Effect.scoped(watch("closed in time"))
      // Without a countdown there is nothing to watch.
      yield* closeAtExpiry(Effect.sync(() => closed.push("no countdown")))
      yield* deadline.begin
      yield* TestClock.adjust("3 seconds")
      expect(closed).toEqual(["open"])
    }),
  )
})
