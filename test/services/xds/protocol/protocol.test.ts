import { describe, expect, it } from "@effect/vitest"
import { emptyDeltaState, onDeltaRequest, onDeltaSent, planDelta } from "../../../../src/services/xds/protocol/delta.js"
import { emptySotwState, onSotwRequest, onSotwSent } from "../../../../src/services/xds/protocol/sotw.js"
import { PUSH_ORDER, TypeUrl } from "../../../../src/services/xds/protocol/type-urls.js"

const CDS = TypeUrl.Cluster
const EDS = TypeUrl.Endpoint

describe("type URLs", () => {
  it("pushes CDS, EDS, LDS, RDS, SDS in that order, then ECDS and NDS, then the node proxy's addresses and authorizations", () => {
    expect(PUSH_ORDER).toEqual([
      TypeUrl.Cluster,
      TypeUrl.Endpoint,
      TypeUrl.Listener,
      TypeUrl.Route,
      TypeUrl.Secret,
      TypeUrl.ExtensionConfig,
      TypeUrl.NameTable,
      TypeUrl.Address,
      TypeUrl.Authorization,
    ])
  })
})

describe("SotW protocol", () => {
  it("answers a new watch; CDS/LDS without names are wildcard, EDS is named", () => {
    const a = onSotwRequest(emptySotwState, { type_url: CDS })
    expect(a.respond).toBe(true)
    expect(a.event._tag).toBe("Subscribe")
    expect(a.state.watches.get(CDS)?.wildcard).toBe(true)
    const b = onSotwRequest(a.state, { type_url: EDS, resource_names: ["b", "a", "a"] })
    expect(b.state.watches.get(EDS)).toMatchObject({ wildcard: false, names: ["a", "b"] })
    const c = onSotwRequest(emptySotwState, { type_url: CDS, resource_names: ["x", "*"] })
    expect(c.state.watches.get(CDS)).toMatchObject({ wildcard: true, names: ["x"] })
  })

  it("records ACKs without answering, and answers when names change", () => {
    let s = onSotwRequest(emptySotwState, { type_url: EDS, resource_names: ["a"] }).state
    s = onSotwSent(s, EDS, { nonce: "n1", version: "v1", digest: "d" })
    const ack = onSotwRequest(s, { type_url: EDS, resource_names: ["a"], response_nonce: "n1", version_info: "v1" })
    expect(ack.respond).toBe(false)
    expect(ack.event).toEqual({ _tag: "Ack", namesChanged: false })
    expect(ack.state.watches.get(EDS)).toMatchObject({ nonceAcked: "n1", versionAcked: "v1" })
    const more = onSotwRequest(ack.state, {
      type_url: EDS,
      resource_names: ["a", "b"],
      response_nonce: "n1",
      version_info: "v1",
    })
    expect(more.respond).toBe(true)
    expect(more.state.watches.get(EDS)?.names).toEqual(["a", "b"])
    // dropping every name of a named type is an unsubscribe: nothing to send
    const none = onSotwRequest(ack.state, {
      type_url: EDS,
      resource_names: [],
      response_nonce: "n1",
      version_info: "v1",
    })
    expect(none.respond).toBe(false)
  })

  it("an ACK repeating the last list in its own order keeps the watch's names, wildcard or not", () => {
    for (const [typeUrl, listed, names, wildcard] of [
      [EDS, ["b", "a", "b"], ["a", "b"], false],
      [EDS, ["*", "c"], ["c"], true],
      [EDS, ["*"], [], true],
    ] as const) {
      let s = onSotwRequest(emptySotwState, { type_url: typeUrl, resource_names: [...listed] }).state
      s = onSotwSent(s, typeUrl, { nonce: "n1", version: "v1", digest: "d" })
      const watch = s.watches.get(typeUrl)!
      const ack = onSotwRequest(s, { type_url: typeUrl, resource_names: [...listed], response_nonce: "n1" })
      expect(ack.event).toEqual({ _tag: "Ack", namesChanged: false })
      expect(ack.respond).toBe(false)
      // the same array: what was derived from the names stays cached
      expect(ack.state.watches.get(typeUrl)?.names).toBe(watch.names)
      expect(ack.state.watches.get(typeUrl)).toMatchObject({ names, wildcard })
      // another list with the same names, in another order, is no change either
      const reordered = onSotwRequest(ack.state, {
        type_url: typeUrl,
        resource_names: [...listed].reverse(),
        response_nonce: "n1",
      })
      expect(reordered.event).toEqual({ _tag: "Ack", namesChanged: false })
      expect(reordered.state.watches.get(typeUrl)).toMatchObject({ names, wildcard })
    }
  })

  it("ignores stale nonces", () => {
    let s = onSotwRequest(emptySotwState, { type_url: EDS, resource_names: ["a"] }).state
    s = onSotwSent(s, EDS, { nonce: "n1", version: "v1", digest: "d" })
    s = onSotwSent(s, EDS, { nonce: "n2", version: "v2", digest: "d2" })
    const stale = onSotwRequest(s, {
      type_url: EDS,
      resource_names: ["a", "b"],
      response_nonce: "n1",
      version_info: "v1",
    })
    expect(stale.event._tag).toBe("StaleNonce")
    expect(stale.respond).toBe(false)
    expect(stale.state).toBe(s)
  })

  it("a NACK records the error, keeps the last good version and is not answered", () => {
    let s = onSotwRequest(emptySotwState, { type_url: CDS }).state
    s = onSotwSent(s, CDS, { nonce: "n1", version: "v1", digest: "d" })
    s = onSotwRequest(s, { type_url: CDS, response_nonce: "n1", version_info: "v1" }).state
    s = onSotwSent(s, CDS, { nonce: "n2", version: "v2", digest: "d2" })
    // a NACK may carry the new version: error_detail decides
    const nack = onSotwRequest(s, {
      type_url: CDS,
      response_nonce: "n2",
      version_info: "v2",
      error_detail: { code: 3, message: "bad cluster" },
    })
    expect(nack.event).toEqual({ _tag: "Nack", error: "bad cluster" })
    expect(nack.respond).toBe(false)
    expect(nack.state.watches.get(CDS)).toMatchObject({ versionAcked: "v1", lastError: "bad cluster" })
    // the next ACK clears the error
    const s2 = onSotwSent(nack.state, CDS, { nonce: "n3", version: "v3", digest: "d3" })
    const ack = onSotwRequest(s2, { type_url: CDS, response_nonce: "n3", version_info: "v3" })
    expect(ack.state.watches.get(CDS)?.lastError).toBeUndefined()
    expect(ack.state.watches.get(CDS)?.versionAcked).toBe("v3")
  })

  it("answers a reconnect that carries its last version and an empty nonce", () => {
    const step = onSotwRequest(emptySotwState, { type_url: CDS, version_info: "old", response_nonce: "" })
    expect(step.respond).toBe(true)
    expect(step.event).toEqual({ _tag: "Subscribe", reconnect: true })
    // and one carrying a nonce from another server instance
    const other = onSotwRequest(emptySotwState, { type_url: CDS, version_info: "old", response_nonce: "foreign" })
    expect(other.respond).toBe(true)
  })
})

describe("delta protocol", () => {
  it("honours initial_resource_versions: only changed resources are sent", () => {
    const step = onDeltaRequest(emptyDeltaState, {
      type_url: EDS,
      resource_names_subscribe: ["a", "b"],
      initial_resource_versions: { a: "1", b: "1" },
    })
    expect(step.respond).toBe(true)
    const watch = step.state.watches.get(EDS)!
    const plan = planDelta(watch, [
      { name: "a", version: "1" },
      { name: "b", version: "2" },
    ])
    expect(plan).toEqual({ send: ["b"], removed: [] })
  })

  it("a plain ACK keeps the watch's names and held versions as they were, the same objects", () => {
    let s = onDeltaRequest(emptyDeltaState, { type_url: EDS, resource_names_subscribe: ["a", "b"] }).state
    s = onDeltaSent(s, EDS, { nonce: "n1", versions: [{ name: "a", version: "1" }], removed: [] })
    const before = s.watches.get(EDS)!
    const ack = onDeltaRequest(s, { type_url: EDS, response_nonce: "n1" })
    expect(ack.event).toEqual({ _tag: "Ack", added: 0, removed: 0 })
    expect(ack.respond).toBe(false)
    const after = ack.state.watches.get(EDS)!
    expect(after).toMatchObject({ nonceAcked: "n1", nonceSent: "n1" })
    expect(after.subscribed).toBe(before.subscribed)
    expect(after.known).toBe(before.known)
    expect(after.pending).toBe(before.pending)
    // versions the client announced for names it does not watch are still forgotten by the next request
    const initial = onDeltaRequest(emptyDeltaState, {
      type_url: EDS,
      resource_names_subscribe: ["a"],
      initial_resource_versions: { a: "1", z: "9" },
    }).state
    const sent = onDeltaSent(initial, EDS, { nonce: "n1", versions: [], removed: [] })
    const next = onDeltaRequest(sent, { type_url: EDS, response_nonce: "n1" })
    expect([...next.state.watches.get(EDS)!.known.keys()]).toEqual(["a"])
  })

  it("subscribes and unsubscribes without a full resend, and removes explicitly", () => {
    let s = onDeltaRequest(emptyDeltaState, { type_url: EDS, resource_names_subscribe: ["a"] }).state
    let plan = planDelta(s.watches.get(EDS)!, [{ name: "a", version: "1" }])
    expect(plan).toEqual({ send: ["a"], removed: [] })
    s = onDeltaSent(s, EDS, { nonce: "n1", versions: [{ name: "a", version: "1" }], removed: [] })
    const sub = onDeltaRequest(s, { type_url: EDS, response_nonce: "n1", resource_names_subscribe: ["b"] })
    expect(sub.respond).toBe(true)
    plan = planDelta(sub.state.watches.get(EDS)!, [
      { name: "a", version: "1" },
      { name: "b", version: "1" },
    ])
    expect(plan.send).toEqual(["b"])
    s = onDeltaSent(sub.state, EDS, { nonce: "n2", versions: [{ name: "b", version: "1" }], removed: [] })
    // a goes away: explicit removal
    plan = planDelta(s.watches.get(EDS)!, [{ name: "b", version: "1" }])
    expect(plan).toEqual({ send: [], removed: ["a"] })
    // unsubscribe needs no response
    const unsub = onDeltaRequest(s, { type_url: EDS, response_nonce: "n2", resource_names_unsubscribe: ["b"] })
    expect(unsub.respond).toBe(false)
    expect([...unsub.state.watches.get(EDS)!.subscribed]).toEqual(["a"])
  })

  it("a subscription to a missing resource is answered with a removal", () => {
    const s = onDeltaRequest(emptyDeltaState, { type_url: EDS, resource_names_subscribe: ["missing"] }).state
    expect(planDelta(s.watches.get(EDS)!, [])).toEqual({ send: [], removed: ["missing"] })
  })

  it("wildcard CDS, stale nonces ignored, NACK recorded", () => {
    let s = onDeltaRequest(emptyDeltaState, { type_url: CDS }).state
    expect(s.watches.get(CDS)?.wildcard).toBe(true)
    s = onDeltaSent(s, CDS, { nonce: "n1", versions: [{ name: "c", version: "1" }], removed: [] })
    s = onDeltaSent(s, CDS, { nonce: "n2", versions: [{ name: "c", version: "2" }], removed: [] })
    expect(onDeltaRequest(s, { type_url: CDS, response_nonce: "n1" }).event._tag).toBe("StaleNonce")
    const nack = onDeltaRequest(s, { type_url: CDS, response_nonce: "n2", error_detail: { message: "no" } })
    expect(nack.event).toEqual({ _tag: "Nack", error: "no" })
    expect(nack.respond).toBe(false)
    expect(nack.state.watches.get(CDS)?.lastError).toBe("no")
  })
})
