/** The trust bundle's watchers: registration, acknowledgements, counts and the lagging list (bounded). */
import { describe, expect, it } from "vitest"
import {
  ackWatcher,
  addWatcher,
  countWatchers,
  LAGGING_LISTED,
  laggingWatchers,
  noWatchers,
  removeWatcher,
  WATCHER_TEXT_MAX,
} from "../../../src/services/ca/trust-bundle-watchers.js"

describe("trust bundle watchers", () => {
  it("counts the watchers holding a version and lists the others", () => {
    let w = addWatcher(noWatchers, 1, "spiffe://a", "peer-a")
    w = addWatcher(w, 2, "spiffe://b", "peer-b")
    w = ackWatcher(w, 1, "v1")
    expect(countWatchers(w, "v1")).toEqual({ total: 2, current: 1 })
    expect(laggingWatchers(w, "v1")).toEqual([{ identity: "spiffe://b", peer: "peer-b", acked: undefined }])
    w = ackWatcher(w, 2, "v1")
    expect(countWatchers(w, "v1")).toEqual({ total: 2, current: 2 })
    expect(countWatchers(w, "v2")).toEqual({ total: 2, current: 0 })
    w = removeWatcher(w, 1)
    expect(countWatchers(w, "v1")).toEqual({ total: 1, current: 1 })
    // Unknown ids change nothing.
    expect(ackWatcher(w, 9, "v1")).toBe(w)
    expect(removeWatcher(w, 9)).toBe(w)
  })

  it("cuts what a caller controls and lists a bounded number of laggards", () => {
    const long = "x".repeat(10_000)
    let w = addWatcher(noWatchers, 1, long, long)
    w = ackWatcher(w, 1, long)
    const only = w.get(1)!
    expect([only.identity.length, only.peer.length, only.acked!.length]).toEqual([
      WATCHER_TEXT_MAX,
      WATCHER_TEXT_MAX,
      WATCHER_TEXT_MAX,
    ])
    for (let i = 2; i < LAGGING_LISTED + 50; i++) w = addWatcher(w, i, `id-${i}`, "p")
    expect(laggingWatchers(w, "v")).toHaveLength(LAGGING_LISTED)
  })
})
