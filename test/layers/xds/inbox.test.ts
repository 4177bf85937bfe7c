import { EventEmitter } from "node:events"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { type InboxCall, makeInbox } from "../../../src/layers/xds/inbox.js"

interface Req {
  readonly type: string
  readonly n: number
  readonly ack?: boolean
}

/** A call whose `data` events the test emits; records pause/resume. */
const fakeCall = () => {
  const emitter = new EventEmitter()
  const flow: Array<"pause" | "resume"> = []
  const call = Object.assign(emitter, {
    pause: () => flow.push("pause"),
    resume: () => flow.push("resume"),
  }) as unknown as InboxCall<Req> & EventEmitter
  return { call, flow, send: (r: Req) => emitter.emit("data", r) }
}

const options = (extra: Partial<Parameters<typeof makeInbox<Req>>[1]> = {}) => {
  const overflows: Array<number> = []
  const accepted: Array<Req> = []
  return {
    overflows,
    accepted,
    options: {
      screen: () => true,
      acceptNow: (r: Req) => {
        if (r.ack !== true) return false
        accepted.push(r)
        return true
      },
      maxPending: 4,
      onOverflow: (n: number) => overflows.push(n),
      ...extra,
    },
  }
}

describe("ADS stream inbox", () => {
  it.effect("pauses the call while its fiber is busy and resumes once it took what was queued", () =>
    Effect.gen(function* () {
      const f = fakeCall()
      const o = options()
      const inbox = makeInbox(f.call, o.options)
      const first = yield* Effect.fork(inbox.next)
      yield* Effect.yieldNow()
      f.send({ type: "cds", n: 1 })
      expect(yield* Fiber.join(first)).toEqual({ type: "cds", n: 1 })
      expect(f.flow).toEqual([])
      // busy: the next request waits, and the call stops being read
      f.send({ type: "lds", n: 2 })
      expect(f.flow).toEqual(["pause"])
      inbox.handled()
      expect(yield* inbox.next).toEqual({ type: "lds", n: 2 })
      expect(f.flow).toEqual(["pause", "resume"])
      inbox.handled()
      // idle: an ACK is taken where it is read
      f.send({ type: "cds", n: 3, ack: true })
      expect(o.accepted.map((r) => r.n)).toEqual([3])
      expect(f.flow).toEqual(["pause", "resume"])
    }),
  )

  it.effect("state of the world: queued requests of one type coalesce, the latest kept in the first's place", () =>
    Effect.gen(function* () {
      const f = fakeCall()
      const inbox = makeInbox(f.call, { ...options().options, coalesceKey: (r) => r.type })
      f.send({ type: "cds", n: 0 })
      yield* inbox.next
      // grpc-js may deliver more before the pause takes effect: thousands of them stay 2
      for (let n = 1; n <= 1000; n++) f.send({ type: n % 2 === 0 ? "cds" : "lds", n })
      inbox.handled()
      expect(yield* inbox.next).toEqual({ type: "lds", n: 999 })
      inbox.handled()
      expect(yield* inbox.next).toEqual({ type: "cds", n: 1000 })
    }),
  )

  it.effect("delta: requests stay exact and in order; more than the bound ends the stream", () =>
    Effect.gen(function* () {
      const f = fakeCall()
      const o = options()
      const inbox = makeInbox(f.call, o.options)
      f.send({ type: "eds", n: 0 })
      yield* inbox.next
      for (let n = 1; n <= 4; n++) f.send({ type: "eds", n })
      expect(o.overflows).toEqual([])
      inbox.handled()
      expect(yield* inbox.next).toEqual({ type: "eds", n: 1 })
      inbox.handled()
      expect(yield* inbox.next).toEqual({ type: "eds", n: 2 })
      for (let n = 5; n <= 100; n++) f.send({ type: "eds", n })
      expect(o.overflows).toEqual([5])
      // the stream is over: nothing more is queued or handed out
      inbox.handled()
      expect(yield* inbox.next).toBeNull()
    }),
  )

  it.effect("screened-out requests are dropped; a closed stream hands out what was queued, then null", () =>
    Effect.gen(function* () {
      const f = fakeCall()
      const inbox = makeInbox(f.call, { ...options().options, screen: (r) => r.type !== "unknown" })
      const waiting = yield* Effect.fork(inbox.next)
      f.send({ type: "unknown", n: 1 })
      yield* Effect.yieldNow()
      expect(waiting.unsafePoll()).toBeNull()
      f.send({ type: "cds", n: 2 })
      expect(yield* Fiber.join(waiting)).toEqual({ type: "cds", n: 2 })
      f.send({ type: "lds", n: 3 })
      f.call.emit("end")
      inbox.handled()
      expect(yield* inbox.next).toEqual({ type: "lds", n: 3 })
      inbox.handled()
      expect(yield* inbox.next).toBeNull()
    }),
  )
})
