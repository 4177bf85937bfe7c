import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, HashSet, Queue, TestClock } from "effect"
import { type DebouncedPush, makeDebouncer } from "../../../src/layers/xds/debouncer.js"
import { makePushRequest } from "../../../src/services/xds/push/push-request.js"

const eds = (name: string) =>
  makePushRequest({
    full: false,
    configsUpdated: [{ kind: "ServiceEntry", namespace: "default", name }],
    reason: "endpoint",
    start: 0,
  })
const full = (name: string) =>
  makePushRequest({
    full: true,
    configsUpdated: [{ kind: "VirtualService", namespace: "default", name }],
    reason: "config",
    start: 0,
  })

const options = (enableEdsDebounce = true) => ({
  debounceAfter: Duration.millis(100),
  debounceMax: Duration.seconds(1),
  enableEdsDebounce,
})

const settle = Effect.repeatN(Effect.yieldNow(), 20)

describe("debouncer", () => {
  it.scoped("merges events and pushes after a quiet period of PILOT_DEBOUNCE_AFTER", () =>
    Effect.gen(function* () {
      const pushes = yield* Queue.unbounded<DebouncedPush>()
      const debouncer = yield* makeDebouncer(options(), (p) => Queue.offer(pushes, p))
      yield* debouncer.offer(full("a"))
      yield* settle
      yield* TestClock.adjust("50 millis")
      yield* debouncer.offer(eds("b"))
      yield* settle
      yield* TestClock.adjust("90 millis")
      yield* debouncer.offer(full("c"))
      yield* settle
      yield* TestClock.adjust("99 millis")
      yield* settle
      expect(yield* Queue.size(pushes)).toBe(0)
      yield* TestClock.adjust("1 millis")
      const push = yield* Queue.take(pushes)
      expect(push.events).toBe(3)
      expect(push.request.full).toBe(true)
      expect(HashSet.size(push.request.configsUpdated)).toBe(3)
      expect(push.debounceMillis).toBe(240)
    }),
  )

  it.scoped("forces a push once PILOT_DEBOUNCE_MAX has elapsed without a gap", () =>
    Effect.gen(function* () {
      const pushes = yield* Queue.unbounded<DebouncedPush>()
      const debouncer = yield* makeDebouncer(options(), (p) => Queue.offer(pushes, p))
      for (let i = 0; i < 30; i++) {
        yield* debouncer.offer(full(`c${i}`))
        yield* settle
        yield* TestClock.adjust("50 millis")
        yield* settle
        if ((yield* Queue.size(pushes)) > 0) break
      }
      const push = yield* Queue.take(pushes)
      expect(push.debounceMillis).toBe(1000)
      expect(push.events).toBe(20)
    }),
  )

  it.scoped("with PILOT_ENABLE_EDS_DEBOUNCE=false endpoint-only requests are pushed at once", () =>
    Effect.gen(function* () {
      const pushes = yield* Queue.unbounded<DebouncedPush>()
      const debouncer = yield* makeDebouncer(options(false), (p) => Queue.offer(pushes, p))
      yield* debouncer.offer(eds("a"))
      const push = yield* Queue.take(pushes)
      expect(push.request.full).toBe(false)
      expect(push.debounceMillis).toBe(0)
      // full requests still debounce
      yield* debouncer.offer(full("vs"))
      yield* settle
      expect(yield* Queue.size(pushes)).toBe(0)
      yield* TestClock.adjust("100 millis")
      expect((yield* Queue.take(pushes)).request.full).toBe(true)
    }),
  )

  /**
   * A debouncer whose first push waits for `gate` (then ends as `firstEnds` says), after it was
   * made to start; every push is recorded in `pushes`.
   */
  const withFirstPushHeld = (firstEnds: Effect.Effect<void>) =>
    Effect.gen(function* () {
      const pushes = yield* Queue.unbounded<DebouncedPush>()
      const gate = yield* Deferred.make<void>()
      let first = true
      const debouncer = yield* makeDebouncer(options(), (p) =>
        Effect.gen(function* () {
          yield* Queue.offer(pushes, p)
          if (first) {
            first = false
            yield* Deferred.await(gate)
            yield* firstEnds
          }
        }),
      )
      yield* debouncer.offer(full("a"))
      yield* settle
      yield* TestClock.adjust("100 millis")
      expect((yield* Queue.take(pushes)).events).toBe(1)
      return { debouncer, pushes, release: Deferred.succeed(gate, undefined) }
    })

  it.scoped("runs one push at a time; events during a push are merged into the next", () =>
    Effect.gen(function* () {
      const { debouncer, pushes, release } = yield* withFirstPushHeld(Effect.void)
      yield* debouncer.offer(full("b"))
      yield* debouncer.offer(full("c"))
      yield* settle
      yield* TestClock.adjust("500 millis")
      yield* settle
      expect(yield* Queue.size(pushes)).toBe(0) // first push still running
      yield* release
      const second = yield* Queue.take(pushes)
      expect(second.events).toBe(2)
    }),
  )

  it.scoped("a push that dies does not stop the pushes of what arrived meanwhile", () =>
    Effect.gen(function* () {
      const { debouncer, pushes, release } = yield* withFirstPushHeld(Effect.die(new Error("generator bug")))
      yield* debouncer.offer(full("b"))
      yield* settle
      yield* TestClock.adjust("500 millis")
      yield* release
      yield* settle
      expect((yield* Queue.take(pushes)).events).toBe(1)
    }),
  )

  it.scoped("a push that throws when it is started counts as one that died", () =>
    Effect.gen(function* () {
      const pushes = yield* Queue.unbounded<DebouncedPush>()
      let calls = 0
      const debouncer = yield* makeDebouncer(options(), (p) => {
        if (++calls === 1) throw new Error("fan-out bug")
        return Queue.offer(pushes, p)
      })
      yield* debouncer.offer(full("a"))
      yield* settle
      yield* TestClock.adjust("100 millis")
      yield* settle
      expect(calls).toBe(1)
      yield* debouncer.offer(full("b"))
      yield* settle
      yield* TestClock.adjust("100 millis")
      expect((yield* Queue.take(pushes)).request.configsUpdated).toEqual(full("b").configsUpdated)
    }),
  )
})
