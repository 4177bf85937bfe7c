/** The drain rule under TestClock. */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Ref, TestClock } from "effect"
import { drain } from "../../../../src/services/agent/status/drain.js"
import { combine } from "../../../../src/services/agent/status/status.js"

const settings = {
  minimumDrain: Duration.seconds(5),
  exitOnZeroActiveConnections: true,
  terminationDrain: Duration.seconds(30),
}

describe("drain", () => {
  it.effect("with EXIT_ON_ZERO_ACTIVE_CONNECTIONS: not before MINIMUM_DRAIN_DURATION even with zero connections", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(drain(settings, Effect.succeed(0)))
      yield* TestClock.adjust("4999 millis")
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(fiber)
    }),
  )

  it.effect("with EXIT_ON_ZERO_ACTIVE_CONNECTIONS: after the minimum, ends at the first check that sees zero", () =>
    Effect.gen(function* () {
      const active = yield* Ref.make(3)
      const fiber = yield* Effect.fork(drain(settings, Ref.get(active)))
      yield* TestClock.adjust("5 seconds")
      yield* TestClock.adjust("10 seconds")
      expect(fiber.unsafePoll()).toBeNull()
      yield* Ref.set(active, 0)
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber)
    }),
  )

  it.effect(
    "with EXIT_ON_ZERO_ACTIVE_CONNECTIONS: waits for zero at most the termination drain after the minimum",
    () =>
      Effect.gen(function* () {
        const fiber = yield* Effect.fork(drain(settings, Effect.succeed(1)))
        yield* TestClock.adjust("5 seconds")
        yield* TestClock.adjust("29 seconds")
        expect(fiber.unsafePoll()).toBeNull()
        yield* TestClock.adjust("1 second")
        yield* Fiber.join(fiber)
      }),
  )

  it.effect("without it: drains for the termination drain duration regardless of connections", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.fork(drain({ ...settings, exitOnZeroActiveConnections: false }, Effect.succeed(0)))
      yield* TestClock.adjust("29 seconds")
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber)
    }),
  )
})

describe("readiness", () => {
  it("reports the first failing condition", () => {
    expect(
      combine([
        [true, "a"],
        [true, "b"],
      ]),
    ).toEqual({ ready: true })
    expect(
      combine([
        [true, "a"],
        [false, "no xDS"],
        [false, "c"],
      ]),
    ).toEqual({ ready: false, reason: "no xDS" })
  })
})
