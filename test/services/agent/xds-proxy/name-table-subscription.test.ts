/**
 * The agent's NDS subscription rules: the (re)subscription requests carry what was accepted,
 * responses become tables and ACKs, and a table that cannot be decoded is NACKed with the
 * version held while the DNS proxy keeps its table.
 */
import { describe, expect, it } from "vitest"
import {
  deltaNameTableRequest,
  NAME_TABLE_TYPE_URL,
  notSubscribed,
  onDeltaNameTable,
  onSotwNameTable,
  sotwNameTableRequest,
  toNameTable,
} from "../../../../src/services/agent/xds-proxy/name-table-subscription.js"

const decoded = {
  table: {
    "reviews.default.svc.cluster.local": {
      ips: ["10.96.0.7"],
      registry: "Orchestrator",
      shortname: "reviews",
      namespace: "default",
      alt_hosts: ["reviews.default", "reviews.default.svc"],
    },
    "db.example.com": { ips: ["192.0.2.1"] },
  },
}
const identity = (value: unknown) => value
const broken = () => {
  throw new Error("index out of range")
}

describe("NDS subscription", () => {
  it("subscribes as a wildcard, naming the accepted version on a reconnect", () => {
    expect(sotwNameTableRequest(notSubscribed)).toEqual({ type_url: NAME_TABLE_TYPE_URL, resource_names: [] })
    expect(sotwNameTableRequest({ subscribed: true, accepted: "v3" })).toMatchObject({ version_info: "v3" })
    expect(deltaNameTableRequest(notSubscribed)).toEqual({
      type_url: NAME_TABLE_TYPE_URL,
      resource_names_subscribe: [],
    })
    expect(deltaNameTableRequest({ subscribed: true, accepted: "abc" })).toMatchObject({
      initial_resource_versions: { "": "abc" },
    })
  })

  it("fills the fields proto decoding leaves out", () => {
    expect(toNameTable(decoded).table["db.example.com"]).toEqual({ ips: ["192.0.2.1"], registry: "" })
    expect(toNameTable({}).table).toEqual({})
  })

  it("SotW: a table and an ACK with the response's version and nonce", () => {
    const out = onSotwNameTable(
      { subscribed: true, accepted: undefined },
      { version_info: "v1", nonce: "n1", resources: [decoded] },
      identity,
    )
    expect(Object.keys(out.table!.table).sort()).toEqual(["db.example.com", "reviews.default.svc.cluster.local"])
    expect(out.reply).toEqual({
      type_url: NAME_TABLE_TYPE_URL,
      version_info: "v1",
      response_nonce: "n1",
      resource_names: [],
    })
    expect(out.subscription.accepted).toBe("v1")
    // no resource: the proxy has no names
    expect(onSotwNameTable(out.subscription, { version_info: "v2", nonce: "n2" }, identity).table).toEqual({
      table: {},
    })
  })

  it("SotW: an undecodable table is NACKed with the version held", () => {
    const out = onSotwNameTable(
      { subscribed: true, accepted: "v1" },
      { version_info: "v2", nonce: "n2", resources: [{}] },
      broken,
    )
    expect(out.table).toBeUndefined()
    expect(out.reply).toMatchObject({ version_info: "v1", response_nonce: "n2", error_detail: { code: 3 } })
    expect(out.rejected).toContain("index out of range")
    expect(out.subscription.accepted).toBe("v1")
  })

  it("delta: a resource replaces the table, a removal empties it, neither changes nothing", () => {
    const sent = onDeltaNameTable(
      notSubscribed,
      { nonce: "a", resources: [{ name: "", version: "h1", resource: decoded }] },
      identity,
    )
    expect(sent.table?.table["reviews.default.svc.cluster.local"]?.ips).toEqual(["10.96.0.7"])
    expect(sent.reply).toEqual({ type_url: NAME_TABLE_TYPE_URL, response_nonce: "a" })
    expect(sent.subscription.accepted).toBe("h1")
    const removed = onDeltaNameTable(sent.subscription, { nonce: "b", removed_resources: [""] }, identity)
    expect(removed.table).toEqual({ table: {} })
    expect(removed.subscription.accepted).toBeUndefined()
    const nothing = onDeltaNameTable(sent.subscription, { nonce: "c" }, identity)
    expect(nothing.table).toBeUndefined()
    expect(nothing.subscription.accepted).toBe("h1")
    const nack = onDeltaNameTable(
      sent.subscription,
      { nonce: "d", resources: [{ name: "", version: "h2", resource: {} }] },
      broken,
    )
    expect(nack.reply).toMatchObject({ response_nonce: "d", error_detail: { code: 3 } })
    expect(nack.subscription.accepted).toBe("h1")
  })
})
