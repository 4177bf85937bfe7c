/** The DNS proxy's slots for forwarded queries: a bound per client and one for all, given back on release. */
import { describe, expect, it } from "vitest"
import { emptyTally, makeInflight, tallyLine } from "../../../../src/services/agent/dns/inflight.js"

describe("inflight slots", () => {
  it("refuses a client past its own bound without touching the others", () => {
    const slots = makeInflight({ total: 10, perClient: 2 })
    expect(slots.acquire("a")).toBeUndefined()
    expect(slots.acquire("a")).toBeUndefined()
    expect(slots.acquire("a")).toBe("client")
    expect(slots.acquire("b")).toBeUndefined()
    expect([slots.held(), slots.heldBy("a"), slots.heldBy("b")]).toEqual([3, 2, 1])
    slots.release("a")
    expect(slots.acquire("a")).toBeUndefined()
  })

  it("refuses every client past the total, and gives slots back on release", () => {
    const slots = makeInflight({ total: 3, perClient: 2 })
    for (const client of ["a", "a", "b"]) expect(slots.acquire(client)).toBeUndefined()
    expect(slots.acquire("c")).toBe("total")
    // a client at its own bound hears about that first
    expect(slots.acquire("a")).toBe("client")
    slots.release("b")
    expect(slots.acquire("c")).toBeUndefined()
    for (const client of ["a", "a", "c"]) slots.release(client)
    expect(slots.held()).toBe(0)
    // releasing what was never given changes nothing
    slots.release("z")
    expect(slots.held()).toBe(0)
    expect(slots.heldBy("a")).toBe(0)
  })

  it("summarises what was turned away, and says nothing when nothing was", () => {
    const limits = { total: 1024, perClient: 64 }
    expect(tallyLine(emptyTally(), "10s", limits)).toBeUndefined()
    expect(tallyLine({ refused: 3, dropped: 70000, paused: 2 }, "10s", limits)).toBe(
      "DNS proxy at its bounds in the last 10s: 3 queries refused (1024 forwarded at once), 70000 UDP queries dropped (64 per client), 2 TCP connections paused",
    )
  })
})
