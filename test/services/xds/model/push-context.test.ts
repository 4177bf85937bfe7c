/**
 * A PushContext derives each resource's view, and each host's fingerprint, once per input
 * object: a context built from a `previous` one (or derived from it) shares that memo, so a
 * rebuild after a one-file change derives only that file's resources. Contexts built apart
 * share nothing (two servers in one process).
 */
import { describe, expect, it } from "@effect/vitest"
import {
  changedHosts,
  derivePushContext,
  hostOfResourceName,
  makePushContext,
  type PushContextInput,
} from "../../../../src/services/xds/model/push-context.js"
import {
  destinationRule,
  ECHO,
  endpoint,
  input,
  peerAuthentication,
  resource,
  service,
  virtualService,
  weightedMesh,
} from "../../../fixtures/xds/mesh.js"

const OTHER = "other.default.svc.cluster.local"

const mesh = (): PushContextInput => ({
  ...weightedMesh({ address: "10.0.0.1", port: 8080 }, { address: "10.0.0.2", port: 8080 }),
  services: [service(ECHO), service(OTHER)],
  virtualServices: [
    virtualService("echo", { hosts: ["echo"], http: [{ route: [{ destination: { host: "echo" } }] }] }),
    virtualService("other", { hosts: ["other"], http: [{ route: [{ destination: { host: "other" } }] }] }),
  ],
  peerAuthentications: [peerAuthentication("default", { mtls: { mode: "STRICT" } }, "mesh-system")],
  authorizationPolicies: [resource("AuthorizationPolicy", "allow", { rules: [{}] })],
})

describe("PushContext memo", () => {
  it("a rebuild from `previous` keeps the views of unchanged resources and derives changed ones", () => {
    const before = mesh()
    const first = makePushContext(before)
    const changed = virtualService("other", {
      hosts: ["other"],
      http: [{ route: [{ destination: { host: "other" } }], timeout: "2s" }],
    })
    const after: PushContextInput = { ...before, virtualServices: [before.virtualServices[0]!, changed] }
    const second = makePushContext(after, undefined, "2", first)
    expect(second.memo).toBe(first.memo)
    expect(second.virtualServiceByHost.get(ECHO)).toBe(first.virtualServiceByHost.get(ECHO))
    expect(second.destinationRuleByHost.get(ECHO)).toBe(first.destinationRuleByHost.get(ECHO))
    expect(second.peerAuthentications[0]).toBe(first.peerAuthentications[0])
    expect(second.authorizationPolicies[0]).toBe(first.authorizationPolicies[0])
    expect(second.virtualServiceByHost.get(OTHER)).not.toBe(first.virtualServiceByHost.get(OTHER))
    expect(second.virtualServiceByHost.get(OTHER)?.http[0]?.timeoutNanos).toBe(2_000_000_000n)
    // The unchanged host's fingerprint is the same, the changed one's differs.
    expect(second.fingerprint("vs", ECHO)).toBe(first.fingerprint("vs", ECHO))
    expect(second.fingerprint("vs", OTHER)).not.toBe(first.fingerprint("vs", OTHER))
  })

  it("equals a context built from scratch", () => {
    const first = makePushContext(mesh())
    const next = { ...first.input, endpoints: [endpoint(ECHO, "10.0.0.3", 8080)] }
    const reused = makePushContext(next, undefined, "2", first)
    const fresh = makePushContext(next, undefined, "2")
    const plain = (p: typeof fresh) =>
      JSON.stringify({ ...p, memo: undefined, fingerprint: undefined }, (_k, v) =>
        v instanceof Map ? [...v] : typeof v === "bigint" ? String(v) : v,
      )
    expect(plain(reused)).toBe(plain(fresh))
    for (const host of [ECHO, OTHER])
      for (const facet of ["service", "endpoints", "vs", "dr"] as const)
        expect(reused.fingerprint(facet, host)).toBe(fresh.fingerprint(facet, host))
  })

  it("contexts built apart share nothing; a derived context shares its predecessor's memo", () => {
    const same = mesh()
    const a = makePushContext(same)
    const b = makePushContext(same)
    expect(a.memo).not.toBe(b.memo)
    expect(a.virtualServiceByHost.get(ECHO)).not.toBe(b.virtualServiceByHost.get(ECHO))
    const derived = derivePushContext(
      a,
      { ...same, endpoints: [endpoint(ECHO, "10.0.0.9", 8080)] },
      new Set([ECHO]),
      "2",
    )
    expect(derived.memo).toBe(a.memo)
  })

  it("resources are read as decoded: views of typed specs", () => {
    const push = makePushContext(
      input({
        services: [service(ECHO)],
        destinationRules: [
          destinationRule("echo", {
            host: "echo",
            trafficPolicy: { outlierDetection: { interval: "10s" }, connectionPool: { tcp: { maxConnections: 7 } } },
            subsets: [{ name: "v1" }],
          }),
        ],
      }),
    )
    expect(push.destinationRuleByHost.get(ECHO)).toEqual({
      name: "echo",
      namespace: "default",
      host: "echo",
      trafficPolicy: { outlierDetection: { intervalNanos: 10_000_000_000n }, maxRequests: 7 },
      subsets: [{ name: "v1", labels: {} }],
      ignored: [],
    })
  })
})

describe("changedHosts and DestinationRules", () => {
  const RATINGS = "ratings.default.svc.cluster.local"
  const FRONT = "front.default.svc.cluster.local"
  const API = "api.default.svc.cluster.local"
  const SHOP_A = "a.shop.example"
  const SHOP_B = "b.shop.example"
  const CART = "cart.default.svc.cluster.local"
  const to = (host: string) => ({ route: [{ destination: { host } }] })
  const routing = (ratingsHash: string, shopHash: string): PushContextInput =>
    input({
      services: [service(ECHO), service(RATINGS), service(FRONT), service(API), service(SHOP_A), service(SHOP_B)],
      virtualServices: [
        virtualService("echo", { hosts: ["echo"], http: [to("echo")] }),
        virtualService("front", { hosts: ["front"], http: [to("ratings")] }),
        // api reaches ratings only through its delegate.
        virtualService("api", { hosts: ["api"], http: [{ delegate: { name: "api-ratings" } }] }),
        virtualService("api-ratings", { http: [to("ratings")] }),
        virtualService("cart", { hosts: ["cart"], http: [to(SHOP_A)] }),
      ],
      destinationRules: [
        destinationRule("ratings", {
          host: "ratings",
          trafficPolicy: { loadBalancer: { consistentHash: { httpHeaderName: ratingsHash } } },
        }),
        destinationRule("shop", {
          host: "*.shop.example",
          trafficPolicy: { loadBalancer: { consistentHash: { httpHeaderName: shopHash } } },
        }),
      ],
    })

  it("a hash key change reaches the rule's host and the hosts routing to it, delegates included", () => {
    const before = makePushContext(routing("x-user", "x-shop"))
    const after = makePushContext(routing("x-session", "x-shop"), undefined, "2", before)
    const changed = changedHosts(before, after)
    expect([...(changed ?? [])].sort()).toEqual([API, FRONT, RATINGS].sort())
    // What a proxy's `host:port` route watch stands for is among them (so the watch is pushed).
    expect(changed?.has(hostOfResourceName(after, `${API}:80`)!)).toBe(true)
  })

  it("a wildcard rule's change reaches every service it covers and the hosts routing to them", () => {
    const before = makePushContext(routing("x-user", "x-shop"))
    const after = makePushContext(routing("x-user", "x-basket"), undefined, "2", before)
    expect([...(changedHosts(before, after) ?? [])].sort()).toEqual(["*.shop.example", CART, SHOP_A, SHOP_B].sort())
  })

  it("nothing changed, nothing named", () => {
    const before = makePushContext(routing("x-user", "x-shop"))
    const after = makePushContext(routing("x-user", "x-shop"), undefined, "2", before)
    expect([...(changedHosts(before, after) ?? [])]).toEqual([])
  })
})
