import { describe, expect, it } from "@effect/vitest"
import { hashPolicyOf } from "../../../../../src/services/xds/proxygen/routes/hash-policy.js"
import { retryPolicy } from "../../../../../src/services/xds/proxygen/routes/route-policies.js"

describe("hashPolicyOf", () => {
  it("maps each hash key to its RouteAction.HashPolicy", () => {
    expect(hashPolicyOf({ httpHeaderName: "x-user" })).toEqual({ header: { header_name: "x-user" } })
    expect(hashPolicyOf({ httpCookie: { name: "c", ttl: "1.5s", path: "/p" } })).toEqual({
      cookie: { name: "c", ttl: { seconds: "1", nanos: 500_000_000 }, path: "/p" },
    })
    expect(hashPolicyOf({ useSourceIp: true })).toEqual({ connection_properties: { source_ip: true } })
    expect(hashPolicyOf({ httpQueryParameterName: "q" })).toEqual({ query_parameter: { name: "q" } })
  })

  it("writes no policy the proxy would reject or that hashes on nothing", () => {
    expect(hashPolicyOf({ httpHeaderName: "" })).toBeUndefined()
    expect(hashPolicyOf({ httpQueryParameterName: "" })).toBeUndefined()
    expect(hashPolicyOf({ httpCookie: { ttl: "1s" } })).toBeUndefined()
    expect(hashPolicyOf({ useSourceIp: false })).toBeUndefined()
    expect(hashPolicyOf({ ringHash: { minimumRingSize: 1024 } })).toBeUndefined()
  })
})

describe("retryPolicy of a route to a hashing cluster", () => {
  const predicate = (policy: unknown) => (policy as { retry_host_predicate?: unknown }).retry_host_predicate

  it("drops the previous-hosts predicate unless retryIgnorePreviousHosts asks for it", () => {
    expect(predicate(retryPolicy(undefined, true))).toBeUndefined()
    expect(predicate(retryPolicy({ attempts: 3 }, true))).toBeUndefined()
    expect(predicate(retryPolicy({ attempts: 3, retryIgnorePreviousHosts: true }, true))).toBeDefined()
    expect(predicate(retryPolicy({ attempts: 3, retryIgnorePreviousHosts: false }, false))).toBeUndefined()
    expect(predicate(retryPolicy({ attempts: 3 }, false))).toBeDefined()
    expect(retryPolicy({ attempts: 0 }, true)).toBeUndefined()
  })
})
