import { describe, expect, it } from "@effect/vitest"
import type * as grpc from "@grpc/grpc-js"
import { Duration, Effect, Fiber, TestClock } from "effect"
import { makeWriter, makeWriters, type WritableCall, type Writer } from "../../../src/layers/xds/writer.js"

/** A stream whose writes complete only when `flush` is called (a peer that stopped reading). */
const fakeCall = (options: { readonly destroyed?: boolean } = {}) => {
  const written: Array<string> = []
  const pending: Array<() => void> = []
  const errors: Array<Partial<grpc.StatusObject>> = []
  const call: WritableCall<string> = {
    destroyed: options.destroyed ?? false,
    writableEnded: false,
    write: (message, callback) => {
      written.push(message)
      pending.push(callback)
    },
    emit: (_event, status) => errors.push(status),
    getPeer: () => "ipv4:127.0.0.1:5000",
  }
  const flush = () => {
    for (const callback of pending.splice(0)) callback()
  }
  return { call, written, errors, flush }
}

const settle = Effect.repeatN(Effect.yieldNow(), 10)

/** A write as an effect that completes when the writer calls back. */
const sendOf =
  <T>(writer: Writer<T>) =>
  (message: T): Effect.Effect<void> =>
    Effect.async<void>((resume) => writer.write(message, () => resume(Effect.void)))

describe("ADS writer (PILOT_XDS_SEND_TIMEOUT)", () => {
  it.scoped("a write that does not complete in time ends the stream and counts a write timeout", () =>
    Effect.gen(function* () {
      const f = fakeCall()
      let timeouts = 0
      const send = sendOf(yield* makeWriter(f.call, { sendTimeout: Duration.seconds(5), onTimeout: () => timeouts++ }))
      const fiber = yield* Effect.fork(send("response"))
      yield* settle
      yield* TestClock.adjust("4999 millis")
      yield* settle
      expect(fiber.unsafePoll()).toBeNull()
      expect(timeouts).toBe(0)
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(fiber)
      expect(f.written).toEqual(["response"])
      expect(timeouts).toBe(1)
      expect(f.errors).toEqual([{ code: 4, details: "timeout sending" }]) // DEADLINE_EXCEEDED
    }),
  )

  it.scoped("a write that completes within the timeout neither counts nor ends the stream", () =>
    Effect.gen(function* () {
      const f = fakeCall()
      let timeouts = 0
      const send = sendOf(yield* makeWriter(f.call, { sendTimeout: Duration.seconds(5), onTimeout: () => timeouts++ }))
      const fiber = yield* Effect.fork(send("response"))
      yield* settle
      yield* TestClock.adjust("3 seconds")
      f.flush()
      yield* Fiber.join(fiber)
      yield* TestClock.adjust("10 seconds")
      expect(timeouts).toBe(0)
      expect(f.errors).toEqual([])
    }),
  )

  it.scoped("with no timeout (0s) a write waits as long as it takes", () =>
    Effect.gen(function* () {
      const f = fakeCall()
      let timeouts = 0
      const send = sendOf(yield* makeWriter(f.call, { sendTimeout: Duration.zero, onTimeout: () => timeouts++ }))
      const fiber = yield* Effect.fork(send("response"))
      yield* settle
      yield* TestClock.adjust("1 hour")
      yield* settle
      expect(fiber.unsafePoll()).toBeNull()
      f.flush()
      yield* Fiber.join(fiber)
      expect(timeouts).toBe(0)
      expect(f.errors).toEqual([])
    }),
  )

  it.scoped("a destroyed stream is not written to", () =>
    Effect.gen(function* () {
      const f = fakeCall({ destroyed: true })
      let timeouts = 0
      const send = sendOf(yield* makeWriter(f.call, { sendTimeout: Duration.seconds(1), onTimeout: () => timeouts++ }))
      yield* send("response")
      expect(f.written).toEqual([])
      expect(timeouts).toBe(0)
    }),
  )

  it.scoped("write hands the message over at once and calls back once, on completion or on timeout", () =>
    Effect.gen(function* () {
      const f = fakeCall()
      let timeouts = 0
      const { write } = yield* makeWriter(f.call, {
        sendTimeout: Duration.seconds(5),
        onTimeout: () => timeouts++,
        reset: () => undefined,
      })
      const written: Array<string> = []
      write("first", () => written.push("first"))
      write("second", () => written.push("second"))
      expect(f.written).toEqual(["first", "second"])
      expect(written).toEqual([])
      yield* TestClock.adjust("1 second")
      f.flush()
      expect(written).toEqual(["first", "second"])
      // a completed write's timer is gone: no timeout later
      yield* TestClock.adjust("10 seconds")
      yield* settle
      expect(timeouts).toBe(0)
      write("third", () => written.push("third"))
      yield* settle
      yield* TestClock.adjust("5 seconds")
      yield* settle
      expect(timeouts).toBe(1)
      expect(written).toEqual(["first", "second", "third"])
      // its late completion does not call back twice
      f.flush()
      expect(written).toEqual(["first", "second", "third"])
    }),
  )
  it.scoped("a timed-out stream is reset once, every write it holds calls back, and other streams go on", () =>
    Effect.gen(function* () {
      const stuck = fakeCall()
      const healthy = fakeCall()
      let timeouts = 0
      const resets: Array<string> = []
      const writerOf = yield* makeWriters({
        sendTimeout: Duration.seconds(5),
        onTimeout: () => timeouts++,
        reset: (call) => resets.push(call.getPeer()),
      })
      const a = writerOf(stuck.call)
      const b = writerOf(healthy.call)
      const done: Array<string> = []
      a.write("a1", () => done.push("a1"))
      yield* TestClock.adjust("2 seconds")
      a.write("a2", () => done.push("a2"))
      b.write("b1", () => done.push("b1"))
      healthy.flush()
      yield* TestClock.adjust("3 seconds")
      yield* settle
      // both of the stuck stream's writes are over at the first one's deadline: one timeout
      expect(done).toEqual(["b1", "a1", "a2"])
      expect(timeouts).toBe(1)
      expect(resets).toEqual(["ipv4:127.0.0.1:5000"])
      expect(stuck.errors).toEqual([{ code: 4, details: "timeout sending" }])
      // later writes to it call back at once and write nothing
      a.write("a3", () => done.push("a3"))
      expect(done).toContain("a3")
      expect(stuck.written).toEqual(["a1", "a2"])
      b.write("b2", () => done.push("b2"))
      yield* TestClock.adjust("10 seconds")
      yield* settle
      expect(timeouts).toBe(2)
      expect(healthy.errors).toEqual([{ code: 4, details: "timeout sending" }])
    }),
  )
})

describe("ADS writer: the bytes-in-flight budget", () => {
  const noTimeouts = { sendTimeout: Duration.seconds(5), onTimeout: () => {} }

  it.scoped("over the budget, writes wait in order and go as earlier ones complete", () =>
    Effect.gen(function* () {
      const writerOf = yield* makeWriters({ ...noTimeouts, budgetBytes: 100 })
      const a = fakeCall()
      const b = fakeCall()
      const wa = writerOf(a.call)
      const wb = writerOf(b.call)
      const done: Array<string> = []
      wa.write("a1", () => done.push("a1"), 60)
      wb.write("b1", () => done.push("b1"), 60) // 120 > 100: waits
      wa.write("a2", () => done.push("a2"), 10) // behind b1, though it would fit
      expect(a.written).toEqual(["a1"])
      expect(b.written).toEqual([])
      a.flush()
      expect(done).toEqual(["a1"])
      expect(b.written).toEqual(["b1"])
      expect(a.written).toEqual(["a1", "a2"]) // 60 + 10 fits
      b.flush()
      a.flush()
      expect(done).toEqual(["a1", "b1", "a2"])
    }),
  )

  it.scoped("a write larger than the whole budget goes when nothing else is in flight", () =>
    Effect.gen(function* () {
      const writerOf = yield* makeWriters({ ...noTimeouts, budgetBytes: 100 })
      const a = fakeCall()
      const w = writerOf(a.call)
      let written = 0
      w.write("huge", () => written++, 10_000)
      expect(a.written).toEqual(["huge"])
      w.write("next", () => written++, 1)
      expect(a.written).toEqual(["huge"])
      a.flush()
      expect(a.written).toEqual(["huge", "next"])
      a.flush()
      expect(written).toBe(2)
    }),
  )

  it.scoped("a stream that times out frees its bytes for the streams waiting behind it", () =>
    Effect.gen(function* () {
      let timeouts = 0
      const writerOf = yield* makeWriters({
        sendTimeout: Duration.seconds(5),
        onTimeout: () => timeouts++,
        budgetBytes: 100,
        reset: () => {},
        warn: () => Effect.void,
      })
      const stuck = fakeCall()
      const next = fakeCall()
      writerOf(stuck.call).write("stuck", () => {}, 100)
      let nextDone = false
      writerOf(next.call).write("next", () => (nextDone = true), 50)
      expect(next.written).toEqual([])
      yield* settle
      yield* TestClock.adjust("5 seconds")
      yield* settle
      expect(timeouts).toBe(1)
      expect(next.written).toEqual(["next"])
      next.flush()
      expect(nextDone).toBe(true)
    }),
  )

  it.scoped("a waiting write of a stream closed meanwhile completes without being written", () =>
    Effect.gen(function* () {
      const writerOf = yield* makeWriters({ ...noTimeouts, budgetBytes: 10 })
      const a = fakeCall()
      const b = fakeCall()
      writerOf(a.call).write("a", () => {}, 10)
      let bDone = false
      writerOf(b.call).write("b", () => (bDone = true), 10)
      ;(b.call as { destroyed: boolean }).destroyed = true
      a.flush()
      expect(b.written).toEqual([])
      expect(bDone).toBe(true)
    }),
  )
})
