import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Fiber, HashSet } from "effect"
import { debounceDecision } from "../../../src/services/xds/debounce.js"
import { makePushQueue } from "../../../src/services/xds/push-queue.js"
import { makePushRequest, mergePushRequest, reasonCounts } from "../../../src/services/xds/push-request.js"

const eds = (name: string, start = 0) =>
  makePushRequest({
    full: false,
    configsUpdated: [{ kind: "ServiceEntry", namespace: "default", name }],
    reason: "endpoint",
    start,
  })
const full = (name: string, start = 0) =>
  makePushRequest({
    full: true,
    configsUpdated: [{ kind: "VirtualService", namespace: "default", name }],
    reason: "config",
    start,
  })

describe("push requests", () => {
  it("merge: full if either is, configs and reasons unioned, earliest start", () => {
    const merged = mergePushRequest(eds("a", 5), mergePushRequest(full("vs", 3), eds("b", 9)))
    expect(merged.full).toBe(true)
    expect([...HashSet.values(merged.configsUpdated)].sort()).toEqual([
      "ServiceEntry/default/a",
      "ServiceEntry/default/b",
      "VirtualService/default/vs",
    ])
    expect(reasonCounts(merged)).toEqual({ endpoint: 2, config: 1 })
    expect(merged.start).toBe(3)
    expect(mergePushRequest(eds("a"), eds("b")).full).toBe(false)
  })
})

describe("debounce decision", () => {
  const options = { debounceAfter: Duration.millis(100), debounceMax: Duration.seconds(1), enableEdsDebounce: true }
  it("waits for a quiet period", () => {
    expect(debounceDecision(options, 100, 0, 50)).toEqual({ _tag: "Wait", millis: 50 })
    expect(debounceDecision(options, 150, 0, 50)).toEqual({ _tag: "Push" })
  })
  it("is forced after the maximum", () => {
    expect(debounceDecision(options, 1000, 0, 990)).toEqual({ _tag: "Push" })
  })
})

describe("push queue", () => {
  it.effect("holds one pending request per connection and merges later ones", () =>
    Effect.gen(function* () {
      const queue = yield* makePushQueue<string>()
      yield* queue.enqueue("c1", eds("a"))
      yield* queue.enqueue("c2", eds("a"))
      yield* queue.enqueue("c1", full("vs"))
      expect(yield* queue.pending).toBe(2)
      const [first, request] = yield* queue.dequeue
      expect(first).toBe("c1")
      expect(request.full).toBe(true)
      expect(HashSet.size(request.configsUpdated)).toBe(2)
      // while c1 is processed, new requests are held and re-queued on markDone
      yield* queue.enqueue("c1", eds("b"))
      yield* queue.enqueue("c1", eds("c"))
      const [second] = yield* queue.dequeue
      expect(second).toBe("c2")
      yield* queue.markDone("c2")
      yield* queue.markDone("c1")
      const [again, held] = yield* queue.dequeue
      expect(again).toBe("c1")
      expect(HashSet.size(held.configsUpdated)).toBe(2)
      // removed connections are dropped
      yield* queue.enqueue("c3", eds("a"))
      yield* queue.remove("c3")
      const waiting = yield* Effect.fork(queue.dequeue)
      yield* queue.enqueue("c4", eds("a"))
      const [fourth] = yield* Fiber.join(waiting)
      expect(fourth).toBe("c4")
    }),
  )
})

describe("new-stream rate limit", () => {
  it("admits a burst, makes the next stream wait, refuses when the wait is too long", async () => {
    const { makeTokenBucket, reserve } = await import("../../../src/services/xds/rate-limit.js")
    let bucket = makeTokenBucket(10, 0)
    for (let i = 0; i < 10; i++) {
      const step = reserve(bucket, 0, 1000)
      expect(step.waitMs).toBe(0)
      bucket = step.bucket
    }
    const wait = reserve(bucket, 0, 1000)
    expect(wait.refused).toBe(false)
    expect(wait.waitMs).toBeCloseTo(100)
    bucket = wait.bucket
    for (let i = 0; i < 9; i++) bucket = reserve(bucket, 0, 1000).bucket
    expect(reserve(bucket, 0, 1000).refused).toBe(true)
    // tokens refill with time
    expect(reserve(bucket, 2000, 1000).waitMs).toBe(0)
  })
})
