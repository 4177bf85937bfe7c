/** The xDS proxy's replay rules: what a new upstream stream is told on a reconnect. */
import { describe, expect, it } from "@effect/vitest"
import {
  type DeltaRequest,
  type DeltaVersions,
  deltaReplay,
  emptyDeltaVersions,
  emptyReplay,
  MAX_PENDING_DELTA_RESPONSES,
  type ReplayState,
  recordDelta,
  recordDeltaAnswer,
  recordDeltaResponse,
  recordSotw,
  type SotwRequest,
  sotwReplay,
} from "../../../../src/services/agent/xds-proxy/xds-proxy.js"
import { TypeUrl } from "../../../../src/services/xds/protocol/type-urls.js"

const node = { id: "sidecar~10.0.0.9~client.default~default.svc.cluster.local" }
const sotw = (requests: ReadonlyArray<SotwRequest>) =>
  requests.reduce<ReplayState<SotwRequest>>(recordSotw, emptyReplay())
const delta = (requests: ReadonlyArray<DeltaRequest>) =>
  requests.reduce<ReplayState<DeltaRequest>>(recordDelta, emptyReplay())

describe("SotW replay", () => {
  it("sends each type's last subscription with the last version_info and an empty nonce; the node once", () => {
    const state = sotw([
      { node, type_url: TypeUrl.Listener, resource_names: ["echo:80"] },
      { type_url: TypeUrl.Listener, resource_names: ["echo:80"], version_info: "v1", response_nonce: "n1" },
      { type_url: TypeUrl.Route, resource_names: ["r"] },
      { type_url: TypeUrl.Route, resource_names: ["r", "s"], version_info: "v2", response_nonce: "n2" },
    ])
    expect(sotwReplay(state)).toEqual([
      { type_url: TypeUrl.Listener, resource_names: ["echo:80"], version_info: "v1", node },
      { type_url: TypeUrl.Route, resource_names: ["r", "s"], version_info: "v2" },
    ])
  })

  it("after a NACK replays the version last accepted, without the error", () => {
    const state = sotw([
      { node, type_url: TypeUrl.Cluster, version_info: "v1", response_nonce: "n1" },
      { type_url: TypeUrl.Cluster, version_info: "v1", response_nonce: "n2", error_detail: { message: "bad" } },
    ])
    expect(sotwReplay(state)).toEqual([{ type_url: TypeUrl.Cluster, version_info: "v1", node }])
  })

  it("replays nothing before the downstream asked for anything", () => {
    expect(sotwReplay(emptyReplay())).toEqual([])
  })
})

describe("delta replay", () => {
  const cla = (name: string, version: string) => ({ name, version })
  const subscribed = delta([
    { node, type_url: TypeUrl.Endpoint, resource_names_subscribe: ["a", "b"] },
    { type_url: TypeUrl.Cluster },
  ])

  it("without ACKed responses: the accumulated subscriptions only", () => {
    expect(deltaReplay(subscribed)).toEqual([
      { type_url: TypeUrl.Endpoint, resource_names_subscribe: ["a", "b"], node },
      { type_url: TypeUrl.Cluster, resource_names_subscribe: [] },
    ])
  })

  it("an ACKed response's resources become initial_resource_versions; removals drop them", () => {
    let versions: DeltaVersions = emptyDeltaVersions
    versions = recordDeltaResponse(versions, {
      type_url: TypeUrl.Endpoint,
      nonce: "1",
      resources: [cla("a", "3"), cla("b", "4")],
    })
    versions = recordDeltaResponse(versions, { type_url: TypeUrl.Cluster, nonce: "2", resources: [cla("c1", "9")] })
    // not yet answered: nothing is held
    expect(deltaReplay(subscribed, versions)[0]!.initial_resource_versions).toBeUndefined()
    versions = recordDeltaAnswer(versions, { type_url: TypeUrl.Endpoint, response_nonce: "1" })
    versions = recordDeltaAnswer(versions, { type_url: TypeUrl.Cluster, response_nonce: "2" })
    versions = recordDeltaResponse(versions, {
      type_url: TypeUrl.Endpoint,
      nonce: "3",
      resources: [cla("a", "5")],
      removed_resources: ["b"],
    })
    versions = recordDeltaAnswer(versions, { type_url: TypeUrl.Endpoint, response_nonce: "3" })
    expect(deltaReplay(subscribed, versions)).toEqual([
      { type_url: TypeUrl.Endpoint, resource_names_subscribe: ["a", "b"], initial_resource_versions: { a: "5" }, node },
      // CDS subscribed to nothing by name: a wildcard, so everything held counts
      { type_url: TypeUrl.Cluster, resource_names_subscribe: [], initial_resource_versions: { c1: "9" } },
    ])
    expect(versions.pending.size).toBe(0)
  })

  it("a NACKed response changes nothing held", () => {
    let versions = recordDeltaResponse(emptyDeltaVersions, {
      type_url: TypeUrl.Endpoint,
      nonce: "1",
      resources: [cla("a", "1")],
    })
    versions = recordDeltaAnswer(versions, { type_url: TypeUrl.Endpoint, response_nonce: "1" })
    versions = recordDeltaResponse(versions, { type_url: TypeUrl.Endpoint, nonce: "2", resources: [cla("a", "2")] })
    versions = recordDeltaAnswer(versions, {
      type_url: TypeUrl.Endpoint,
      response_nonce: "2",
      error_detail: { message: "rejected" },
    })
    expect(deltaReplay(subscribed, versions)[0]!.initial_resource_versions).toEqual({ a: "1" })
    expect(versions.pending.size).toBe(0)
  })

  it("names unsubscribed are neither replayed nor claimed as held", () => {
    let versions = recordDeltaResponse(emptyDeltaVersions, {
      type_url: TypeUrl.Endpoint,
      nonce: "1",
      resources: [cla("a", "1"), cla("b", "1")],
    })
    versions = recordDeltaAnswer(versions, { type_url: TypeUrl.Endpoint, response_nonce: "1" })
    const unsubscribe: DeltaRequest = { type_url: TypeUrl.Endpoint, resource_names_unsubscribe: ["b"] }
    versions = recordDeltaAnswer(versions, unsubscribe)
    const state = recordDelta(subscribed, unsubscribe)
    expect(deltaReplay(state, versions)[0]).toEqual({
      type_url: TypeUrl.Endpoint,
      resource_names_subscribe: ["a"],
      initial_resource_versions: { a: "1" },
      node,
    })
    // subscribing again: b is not claimed, so the server sends it
    const again = recordDelta(state, { type_url: TypeUrl.Endpoint, resource_names_subscribe: ["b"] })
    expect(deltaReplay(again, versions)[0]!.initial_resource_versions).toEqual({ a: "1" })
  })

  it("ignores answers to unknown nonces and responses without a nonce", () => {
    const versions = recordDeltaResponse(emptyDeltaVersions, { type_url: TypeUrl.Endpoint, resources: [cla("a", "1")] })
    expect(versions).toBe(emptyDeltaVersions)
    expect(recordDeltaAnswer(versions, { type_url: TypeUrl.Endpoint, response_nonce: "nope" })).toBe(versions)
  })

  it("remembers a bounded number of unanswered responses, forgetting the oldest", () => {
    let versions: DeltaVersions = emptyDeltaVersions
    for (let i = 0; i <= MAX_PENDING_DELTA_RESPONSES; i++) {
      versions = recordDeltaResponse(versions, { type_url: TypeUrl.Endpoint, nonce: String(i), resources: [] })
    }
    expect(versions.pending.size).toBe(MAX_PENDING_DELTA_RESPONSES)
    expect(versions.pending.has("0")).toBe(false)
    expect(versions.pending.has(String(MAX_PENDING_DELTA_RESPONSES))).toBe(true)
  })
})
