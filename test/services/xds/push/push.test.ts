import { describe, expect, it } from "@effect/vitest"
import { Duration, HashSet } from "effect"
import { debounceDecision } from "../../../../src/services/xds/push/debounce.js"
import { makePushDispatcher, type PushSlicing } from "../../../../src/services/xds/push/push-dispatcher.js"
import { makePushQueue } from "../../../../src/services/xds/push/push-queue.js"
import { makePushRequest, mergePushRequest, reasonCounts } from "../../../../src/services/xds/push/push-request.js"

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
  it("holds one pending request per connection and merges later ones", () => {
    const queue = makePushQueue<string>()
    queue.enqueue("c1", eds("a"))
    queue.enqueue("c2", eds("a"))
    queue.enqueue("c1", full("vs"))
    expect(queue.pending()).toBe(2)
    const [first, request] = queue.take()!
    expect(first).toBe("c1")
    expect(request.full).toBe(true)
    expect(HashSet.size(request.configsUpdated)).toBe(2)
    // while c1 is processed, new requests are held and re-queued on markDone
    queue.enqueue("c1", eds("b"))
    queue.enqueue("c1", eds("c"))
    const [second] = queue.take()!
    expect(second).toBe("c2")
    queue.markDone("c2")
    queue.markDone("c1")
    const [again, held] = queue.take()!
    expect(again).toBe("c1")
    expect(HashSet.size(held.configsUpdated)).toBe(2)
    // removed connections are dropped
    queue.enqueue("c3", eds("a"))
    queue.remove("c3")
    expect(queue.take()).toBeUndefined()
    queue.enqueue("c4", eds("a"))
    expect(queue.take()?.[0]).toBe("c4")
  })
})

/** Slicing under the test's control: `clock.now` is advanced by hand, `turn()` runs the deferred. */
const manualSlicing = (sliceMillis: number) => {
  const clock = { now: 0 }
  const deferred: Array<() => void> = []
  const slicing: PushSlicing = { sliceMillis, now: () => clock.now, defer: (next) => deferred.push(next) }
  const turn = () => {
    for (const next of deferred.splice(0)) next()
  }
  return { clock, slicing, turn }
}

describe("push dispatcher", () => {
  it("keeps at most PILOT_PUSH_THROTTLE pushes in flight, in arrival order, one per connection", () => {
    const done = new Map<string, () => void>()
    const started: Array<string> = []
    const dispatcher = makePushDispatcher<string>(
      2,
      (connection, request, finish) => {
        started.push(`${connection}:${[...request.configsUpdated].join("+")}`)
        done.set(connection, finish)
      },
      () => {},
      manualSlicing(1).slicing,
    )
    for (const c of ["c1", "c2", "c3", "c4"]) dispatcher.enqueue(c, eds(c))
    expect(started).toEqual(["c1:ServiceEntry/default/c1", "c2:ServiceEntry/default/c2"])
    expect(dispatcher.inFlight()).toBe(2)
    expect(dispatcher.pending()).toBe(2)
    // a request for a connection in flight waits for its push to complete, merged
    dispatcher.enqueue("c1", eds("x"))
    dispatcher.enqueue("c1", eds("y"))
    done.get("c1")!()
    done.get("c1")!() // a second call is ignored
    expect(started.slice(2)).toEqual(["c3:ServiceEntry/default/c3"])
    done.get("c2")!()
    done.get("c3")!()
    expect(started.slice(3)).toEqual([
      "c4:ServiceEntry/default/c4",
      expect.stringMatching(/^c1:(ServiceEntry\/default\/[xy]\+?){2}$/),
    ])
    done.get("c4")!()
    // a connection closed mid-push frees its slot (its writes may never call back)
    dispatcher.enqueue("c5", eds("c5"))
    dispatcher.enqueue("c6", eds("c6"))
    expect(dispatcher.pending()).toBe(1)
    dispatcher.remove("c1")
    expect(started.at(-1)).toBe("c6:ServiceEntry/default/c6")
    done.get("c1")!()
    expect(dispatcher.inFlight()).toBe(2)
    done.get("c5")!()
    done.get("c6")!()
    expect(dispatcher.inFlight()).toBe(0)
  })

  it("a push completing while it starts frees its slot; a failing start is reported and frees it too", () => {
    const defects: Array<string> = []
    let starts = 0
    const dispatcher = makePushDispatcher<string>(
      1,
      (connection, _request, finish) => {
        starts++
        if (connection === "bad") throw new Error("boom")
        finish()
      },
      (connection, defect) => defects.push(`${connection}: ${String(defect)}`),
      manualSlicing(1).slicing,
    )
    for (const c of ["a", "bad", "b"]) dispatcher.enqueue(c, eds(c))
    expect(starts).toBe(3)
    expect(defects).toEqual(["bad: Error: boom"])
    expect(dispatcher.inFlight()).toBe(0)
    expect(dispatcher.pending()).toBe(0)
  })
})

describe("push slicing", () => {
  it("starts pushes until a turn's slice is used up; the rest go on in the next turn", () => {
    const { clock, slicing, turn } = manualSlicing(1)
    const started: Array<string> = []
    const dispatcher = makePushDispatcher<string>(
      100,
      (connection, _request, done) => {
        started.push(connection)
        clock.now += 0.4 // each push's work
        done()
      },
      () => {},
      slicing,
    )
    for (const c of ["a", "b", "c", "d", "e", "f"]) dispatcher.enqueue(c, eds(c))
    // 0, 0.4, 0.8 ms into the slice: three start; the fourth waits for the next turn
    expect(started).toEqual(["a", "b", "c"])
    expect(dispatcher.pending()).toBe(3)
    turn()
    expect(started).toEqual(["a", "b", "c", "d", "e", "f"])
    turn()
    expect(started).toHaveLength(6)
    // a new turn opens a new slice
    clock.now += 10
    dispatcher.enqueue("g", eds("g"))
    expect(started.at(-1)).toBe("g")
  })
})

describe("new-stream rate limit", () => {
  it("admits a burst, makes the next stream wait, refuses when the wait is too long", async () => {
    const { makeTokenBucket, reserve } = await import("../../../../src/services/xds/protocol/rate-limit.js")
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
