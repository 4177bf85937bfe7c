/**
 * An ACK that keeps the watched names keeps the same names object, so what the server derives
 * from a watch's names (the hosts an endpoint push is matched against) stays cached across
 * ACKs; a change of names yields a new object.
 */
import { describe, expect, it } from "@effect/vitest"
import { emptyDeltaState, onDeltaRequest, onDeltaSent } from "../../../../src/services/xds/protocol/delta.js"
import { emptySotwState, onSotwRequest, onSotwSent } from "../../../../src/services/xds/protocol/sotw.js"
import { TypeUrl } from "../../../../src/services/xds/protocol/type-urls.js"

const EDS = TypeUrl.Endpoint

describe("watched names keep their identity across ACKs", () => {
  it("SotW: same names (in any order) keep the array; other names replace it", () => {
    let s = onSotwRequest(emptySotwState, { type_url: EDS, resource_names: ["b", "a"] }).state
    const names = s.watches.get(EDS)?.names
    s = onSotwSent(s, EDS, { nonce: "n1", version: "v1", digest: "d" })
    s = onSotwRequest(s, { type_url: EDS, resource_names: ["a", "b"], response_nonce: "n1", version_info: "v1" }).state
    expect(s.watches.get(EDS)?.names).toBe(names)
    s = onSotwSent(s, EDS, { nonce: "n2", version: "v2", digest: "d2" })
    const changed = onSotwRequest(s, { type_url: EDS, resource_names: ["a"], response_nonce: "n2", version_info: "v2" })
    expect(changed.state.watches.get(EDS)?.names).toEqual(["a"])
    expect(changed.state.watches.get(EDS)?.names).not.toBe(names)
  })

  it("delta: an ACK without (un)subscriptions keeps the set; a real change replaces it", () => {
    let s = onDeltaRequest(emptyDeltaState, { type_url: EDS, resource_names_subscribe: ["a", "b"] }).state
    s = onDeltaSent(s, EDS, { nonce: "n1", versions: [{ name: "a", version: "1" }], removed: [] })
    const subscribed = s.watches.get(EDS)?.subscribed
    s = onDeltaRequest(s, { type_url: EDS, response_nonce: "n1" }).state
    expect(s.watches.get(EDS)?.subscribed).toBe(subscribed)
    // subscribing a name already held, or unsubscribing one never held, changes nothing
    s = onDeltaRequest(s, { type_url: EDS, resource_names_subscribe: ["a"], resource_names_unsubscribe: ["z"] }).state
    expect(s.watches.get(EDS)?.subscribed).toBe(subscribed)
    const added = onDeltaRequest(s, { type_url: EDS, resource_names_subscribe: ["c"] }).state
    expect([...(added.watches.get(EDS)?.subscribed ?? [])].sort()).toEqual(["a", "b", "c"])
    expect(added.watches.get(EDS)?.subscribed).not.toBe(subscribed)
    const removed = onDeltaRequest(s, { type_url: EDS, resource_names_unsubscribe: ["b"] }).state
    expect([...(removed.watches.get(EDS)?.subscribed ?? [])]).toEqual(["a"])
    // the held set itself was never mutated
    expect([...(subscribed ?? [])].sort()).toEqual(["a", "b"])
  })
})
