/** A watch's sync state from its nonces, and since when a stream has seen it. */
import { describe, expect, it } from "vitest"
import { makeSyncSince, syncStateOf } from "../../../../src/services/xds/protocol/sync-state.js"

describe("sync state", () => {
  it("is NOT_SENT before a response, STALE until it is acknowledged, SYNCED after, NACKED with an error", () => {
    expect(syncStateOf({})).toBe("NOT_SENT")
    expect(syncStateOf({ nonceSent: "a" })).toBe("STALE")
    expect(syncStateOf({ nonceSent: "b", nonceAcked: "a" })).toBe("STALE")
    expect(syncStateOf({ nonceSent: "a", nonceAcked: "a" })).toBe("SYNCED")
    expect(syncStateOf({ nonceSent: "a", nonceAcked: "a", lastError: "bad cluster" })).toBe("NACKED")
  })

  it("keeps the time a state began, moving it only when the state or the NACK's reason changes", () => {
    const since = makeSyncSince()
    const type = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
    since.mark(type, { nonceSent: "1" }, 100)
    since.mark(type, { nonceSent: "1" }, 200)
    expect(since.since(type)).toBe(100)
    since.mark(type, { nonceSent: "1", nonceAcked: "1" }, 300)
    since.mark(type, { nonceSent: "2", nonceAcked: "1" }, 400)
    since.mark(type, { nonceSent: "2", nonceAcked: "2" }, 500)
    expect(since.since(type)).toBe(500)
    since.mark(type, { nonceSent: "2", lastError: "first" }, 600)
    since.mark(type, { nonceSent: "2", lastError: "first" }, 700)
    expect(since.since(type)).toBe(600)
    since.mark(type, { nonceSent: "2", lastError: "second" }, 800)
    expect(since.since(type)).toBe(800)
    since.mark(type, undefined, 900)
    expect(since.since(type)).toBeUndefined()
  })
})
