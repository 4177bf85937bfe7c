/**
 * Consistent hashing as the reference's DestinationRule docs describe it: the cluster hashes
 * (ring hash / Maglev) and the route that picks it carries the hash key — a header, a cookie
 * (with ttl, path and attributes), the source IP or a query parameter — from the rule the asking
 * proxy applies, merged as the cluster merges it (subset and port-level settings). Asked of the
 * evaluator over what the dispatcher gives the productpage sidecar and the ingress gateway, and
 * checked against the proxy's protos; then the cache keys: a hash change changes the RDS keys,
 * anything else of the rule leaves them alone.
 */
import { describe, expect, it } from "@effect/vitest"
import { TypeUrl } from "../../../../../src/services/xds/protocol/type-urls.js"
import { proxyView } from "../../../../../src/services/xds/proxygen/proxy-view.js"
import { expectConformant } from "../../../../support/proxygen/check.js"
import { outboundHttp } from "../../../../support/proxygen/evaluator.js"
import { arr, type Obj, obj } from "../../../../support/proxygen/matchers.js"
import {
  destinationRules,
  dr,
  HTTPBIN,
  ingressRouter,
  meshPush,
  PRODUCTPAGE,
  productpageSidecar,
  proxyConfig,
  RATINGS,
  REVIEWS,
  reviewsRouting,
  virtualServices,
  vs,
} from "./mesh.js"

const cluster = (host: string, port: number, subset = "") => `outbound|${port}|${subset}|${host}`
const PREVIOUS_HOSTS = "envoy.retry_host_predicates.previous_hosts"

/** The mesh's rules with those named like one of `rules` replaced by it. */
const withRules = (...rules: ReadonlyArray<ReturnType<typeof dr>>) => {
  const names = new Set(rules.map((r) => r.meta.name))
  return [...destinationRules.filter((r) => !names.has(r.meta.name)), ...rules]
}

const ratingsRule = (trafficPolicy: unknown, subsets: ReadonlyArray<unknown> = ["v1", "v2"]) =>
  dr("ratings", {
    host: "ratings.default.svc.cluster.local",
    trafficPolicy,
    subsets: subsets.map((s) => (typeof s === "string" ? { name: s, labels: { version: s } } : s)),
  })

const hashOn = (consistentHash: unknown) => ({ loadBalancer: { consistentHash } })

/** The route action the productpage sidecar takes for `host` on `port`, and the whole config. */
const sidecarWith = (rules: ReturnType<typeof withRules>, parts: { virtualServices?: typeof virtualServices } = {}) => {
  const config = proxyConfig(meshPush({ destinationRules: rules, ...parts }), productpageSidecar())
  const action = (host: string, port: number, path = "/") => {
    const hit = outboundHttp({
      listeners: config.listeners.resources,
      routes: config.routes.resources,
      port,
      host,
      path,
    })
    if (hit.kind !== "route") throw new Error(`expected a route to ${host}, got ${hit.kind}`)
    return { ...obj(hit.route.route)!, cluster: hit.cluster, weighted: hit.weightedClusters } as Obj
  }
  return { config, action }
}

const lbPolicyOf = (config: ReturnType<typeof proxyConfig>, name: string) =>
  obj(config.clusters.resources.find((c) => c.name === name))?.lb_policy

describe("the hash key of each kind", () => {
  it("a header: the ratings route hashes on x-user, its cluster is a ring hash", () => {
    const { config, action } = sidecarWith(destinationRules)
    const route = action("ratings", 9080)
    expect(route.cluster).toBe(cluster(RATINGS, 9080, "v1"))
    expect(route.hash_policy).toEqual([{ header: { header_name: "x-user" } }])
    expect(lbPolicyOf(config, cluster(RATINGS, 9080, "v1"))).toBe("RING_HASH")
  })

  it("a cookie with ttl, path and attributes", () => {
    const cookie = {
      name: "session",
      path: "/ratings",
      ttl: "90s",
      attributes: [{ name: "SameSite", value: "Strict" }, { name: "Secure" }],
    }
    const { action } = sidecarWith(withRules(ratingsRule(hashOn({ httpCookie: cookie }))))
    expect(action("ratings", 9080).hash_policy).toEqual([
      {
        cookie: {
          name: "session",
          path: "/ratings",
          ttl: { seconds: "90", nanos: 0 },
          attributes: [{ name: "SameSite", value: "Strict" }, { name: "Secure" }],
        },
      },
    ])
  })

  it("a cookie with a zero ttl keeps it (the proxy then issues a session cookie); without ttl none", () => {
    const zero = sidecarWith(withRules(ratingsRule(hashOn({ httpCookie: { name: "s", ttl: "0s" } }))))
    expect(zero.action("ratings", 9080).hash_policy).toEqual([
      { cookie: { name: "s", ttl: { seconds: "0", nanos: 0 } } },
    ])
    const none = sidecarWith(withRules(ratingsRule(hashOn({ httpCookie: { name: "s" } }))))
    expect(none.action("ratings", 9080).hash_policy).toEqual([{ cookie: { name: "s" } }])
  })

  it("the source IP", () => {
    const { action } = sidecarWith(withRules(ratingsRule(hashOn({ useSourceIp: true }))))
    expect(action("ratings", 9080).hash_policy).toEqual([{ connection_properties: { source_ip: true } }])
  })

  it("a query parameter", () => {
    const { action } = sidecarWith(withRules(ratingsRule(hashOn({ httpQueryParameterName: "user" }))))
    expect(action("ratings", 9080).hash_policy).toEqual([{ query_parameter: { name: "user" } }])
  })

  it("ringHash / maglev shape the cluster only; without a key the route hashes on nothing", () => {
    const maglev = sidecarWith(
      withRules(ratingsRule(hashOn({ httpHeaderName: "x-user", maglev: { tableSize: 65537 } }))),
    )
    expect(maglev.action("ratings", 9080).hash_policy).toEqual([{ header: { header_name: "x-user" } }])
    expect(lbPolicyOf(maglev.config, cluster(RATINGS, 9080, "v1"))).toBe("MAGLEV")
    const keyless = sidecarWith(withRules(ratingsRule(hashOn({ ringHash: { minimumRingSize: 2048 } }))))
    expect(keyless.action("ratings", 9080).hash_policy).toBeUndefined()
    expect(lbPolicyOf(keyless.config, cluster(RATINGS, 9080, "v1"))).toBe("RING_HASH")
  })

  it("a rule without consistentHash: no hash policy, the default retries", () => {
    const { action } = sidecarWith(withRules(ratingsRule({ loadBalancer: { simple: "LEAST_REQUEST" } })))
    const route = action("ratings", 9080)
    expect(route.hash_policy).toBeUndefined()
    expect(JSON.stringify(route.retry_policy)).toContain(PREVIOUS_HOSTS)
  })
})

describe("retries of a hashing route", () => {
  it("a lone hashing destination retries without the previous-hosts predicate (also keyless)", () => {
    for (const hash of [{ httpHeaderName: "x-user" }, { ringHash: { minimumRingSize: 1024 } }]) {
      const { action } = sidecarWith(withRules(ratingsRule(hashOn(hash))))
      const retry = obj(action("ratings", 9080).retry_policy)!
      expect(retry.num_retries).toEqual({ value: 2 })
      expect(retry.retry_host_predicate).toBeUndefined()
    }
  })

  it("retryIgnorePreviousHosts: true asks for the predicate back", () => {
    const ratings = vs("ratings", {
      hosts: ["ratings"],
      http: [
        {
          retries: { attempts: 4, retryIgnorePreviousHosts: true },
          route: [{ destination: { host: "ratings", subset: "v1" } }],
        },
      ],
    })
    const { action } = sidecarWith(destinationRules, {
      virtualServices: [...virtualServices.filter((v) => v.meta.name !== "ratings"), ratings],
    })
    const retry = obj(action("ratings", 9080).retry_policy)!
    expect(retry.num_retries).toEqual({ value: 4 })
    expect(JSON.stringify(retry.retry_host_predicate)).toContain(PREVIOUS_HOSTS)
  })
})

describe("which settings of the rule apply", () => {
  it("a subset's policy overrides the rule's: v1 hashes on a query parameter, v2 on the header", () => {
    const rule = ratingsRule(hashOn({ httpHeaderName: "x-user" }), [
      { name: "v1", labels: { version: "v1" }, trafficPolicy: hashOn({ httpQueryParameterName: "u" }) },
      "v2",
    ])
    const { action } = sidecarWith(withRules(rule))
    expect(action("ratings", 9080).hash_policy).toEqual([{ query_parameter: { name: "u" } }])
    // api's delegate sends /ratings/v2 to ratings v2, which keeps the rule's hash.
    const v2 = action("api:8080", 8080, "/ratings/v2/1")
    expect(v2.cluster).toBe(cluster(RATINGS, 9080, "v2"))
    expect(v2.hash_policy).toEqual([{ header: { header_name: "x-user" } }])
  })

  it("a subset with a simple balancer does not hash: neither its cluster nor its route", () => {
    const rule = ratingsRule(hashOn({ httpHeaderName: "x-user" }), [
      { name: "v1", labels: { version: "v1" }, trafficPolicy: { loadBalancer: { simple: "ROUND_ROBIN" } } },
      "v2",
    ])
    const { config, action } = sidecarWith(withRules(rule))
    expect(action("ratings", 9080).hash_policy).toBeUndefined()
    expect(lbPolicyOf(config, cluster(RATINGS, 9080, "v1"))).not.toBe("RING_HASH")
  })

  it("port-level settings of the destination's port override the rule's (the port of a one-port service too)", () => {
    const rule = ratingsRule({
      ...hashOn({ httpHeaderName: "x-user" }),
      portLevelSettings: [
        { port: { number: 9080 }, ...hashOn({ httpCookie: { name: "c", ttl: "10s" } }) },
        { port: { number: 7777 }, ...hashOn({ useSourceIp: true }) },
      ],
    })
    const { action } = sidecarWith(withRules(rule))
    expect(action("ratings", 9080).hash_policy).toEqual([{ cookie: { name: "c", ttl: { seconds: "10", nanos: 0 } } }])
  })

  it("a subset's port-level settings win over all", () => {
    const rule = ratingsRule(
      { portLevelSettings: [{ port: { number: 9080 }, ...hashOn({ httpHeaderName: "x-port" }) }] },
      [
        {
          name: "v1",
          labels: { version: "v1" },
          trafficPolicy: {
            ...hashOn({ httpHeaderName: "x-subset" }),
            portLevelSettings: [{ port: { number: 9080 }, ...hashOn({ httpHeaderName: "x-subset-port" }) }],
          },
        },
        "v2",
      ],
    )
    const { action } = sidecarWith(withRules(rule))
    expect(action("ratings", 9080).hash_policy).toEqual([{ header: { header_name: "x-subset-port" } }])
    expect(action("api:8080", 8080, "/ratings/v2/1").hash_policy).toEqual([{ header: { header_name: "x-port" } }])
  })

  it("a service without a VirtualService: its default route carries the hash key, retries as usual", () => {
    const httpbin = dr("httpbin", { host: HTTPBIN, trafficPolicy: hashOn({ httpHeaderName: "x-client" }) })
    const { action } = sidecarWith(withRules(httpbin))
    const route = action(HTTPBIN, 80)
    expect(route.cluster).toBe(cluster(HTTPBIN, 80))
    expect(route.hash_policy).toEqual([{ header: { header_name: "x-client" } }])
    expect(JSON.stringify(route.retry_policy)).toContain(PREVIOUS_HOSTS)
  })
})

describe("a VirtualService without routes for the port", () => {
  it("leaves the service its default route, with the hash key of the service's cluster", () => {
    const elsewhere = vs("ratings", {
      hosts: ["ratings"],
      http: [{ match: [{ port: 7777 }], route: [{ destination: { host: "ratings", subset: "v2" } }] }],
    })
    const { action } = sidecarWith(destinationRules, {
      virtualServices: [...virtualServices.filter((v) => v.meta.name !== "ratings"), elsewhere],
    })
    const route = action("ratings", 9080)
    expect(route.cluster).toBe(cluster(RATINGS, 9080))
    expect(route.hash_policy).toEqual([{ header: { header_name: "x-user" } }])
  })
})

describe("weighted destinations (reviews 80/20 over v1/v3)", () => {
  const reviewsRule = (v3: unknown) =>
    dr("reviews", {
      host: "reviews",
      trafficPolicy: hashOn({ httpHeaderName: "x-user" }),
      subsets: [
        { name: "v1", labels: { version: "v1" } },
        { name: "v2", labels: { version: "v2" } },
        { name: "v3", labels: { version: "v3" }, ...(v3 !== undefined ? { trafficPolicy: v3 } : {}) },
      ],
    })

  it("each weighted destination's hash key, in order, as the reference appends them", () => {
    const { action } = sidecarWith(withRules(reviewsRule(hashOn({ useSourceIp: true }))))
    const route = action("reviews", 9080)
    expect(route.weighted).toEqual([
      { name: cluster(REVIEWS, 9080, "v1"), weight: 80 },
      { name: cluster(REVIEWS, 9080, "v3"), weight: 20 },
    ])
    expect(route.hash_policy).toEqual([
      { header: { header_name: "x-user" } },
      { connection_properties: { source_ip: true } },
    ])
    // Weighted routes keep the previous-hosts predicate (the reference's).
    expect(JSON.stringify(route.retry_policy)).toContain(PREVIOUS_HOSTS)
  })

  it("a destination that does not hash adds nothing; one rule for both: once per destination", () => {
    const mixed = sidecarWith(withRules(reviewsRule({ loadBalancer: { simple: "LEAST_REQUEST" } })))
    expect(mixed.action("reviews", 9080).hash_policy).toEqual([{ header: { header_name: "x-user" } }])
    const same = sidecarWith(withRules(reviewsRule(undefined)))
    expect(same.action("reviews", 9080).hash_policy).toEqual([
      { header: { header_name: "x-user" } },
      { header: { header_name: "x-user" } },
    ])
  })

  it("a zero-weight destination is left out, hash key included", () => {
    const split = vs("reviews", {
      hosts: ["reviews"],
      http: [
        {
          route: [
            { destination: { host: "reviews", subset: "v1" }, weight: 100 },
            { destination: { host: "reviews", subset: "v3" }, weight: 0 },
          ],
        },
      ],
    })
    const { action } = sidecarWith(withRules(reviewsRule(hashOn({ useSourceIp: true }))), {
      virtualServices: [...virtualServices.filter((v) => v !== reviewsRouting), split],
    })
    const route = action("reviews", 9080)
    expect(route.cluster).toBe(cluster(REVIEWS, 9080, "v1"))
    expect(route.hash_policy).toEqual([{ header: { header_name: "x-user" } }])
  })
})

describe("gateway routes", () => {
  const productpage = dr("productpage", {
    host: "productpage",
    trafficPolicy: hashOn({ httpCookie: { name: "bookinfo", ttl: "3600s", path: "/" } }),
    subsets: [{ name: "v1", labels: { version: "v1" } }],
  })
  const config = proxyConfig(meshPush({ destinationRules: withRules(productpage) }), ingressRouter())

  it("the ingress gateway's route to productpage carries the cookie hash", () => {
    const hit = outboundHttp({
      listeners: config.listeners.resources,
      routes: config.routes.resources,
      port: 8080,
      host: "bookinfo.example.com",
      path: "/productpage",
    })
    expect(hit).toMatchObject({ kind: "route", cluster: cluster(PRODUCTPAGE, 9080) })
    const route = obj((hit as { route: Obj }).route.route)!
    expect(route.hash_policy).toEqual([{ cookie: { name: "bookinfo", path: "/", ttl: { seconds: "3600", nanos: 0 } } }])
    expect(lbPolicyOf(config, cluster(PRODUCTPAGE, 9080))).toBe("RING_HASH")
  })

  it("passes the proxy's protos", () => expectConformant(TypeUrl.Route, config.routes.resources))
})

describe("conformance and consistency", () => {
  const rules = withRules(
    ratingsRule(hashOn({ httpCookie: { name: "s", path: "/", ttl: "0s", attributes: [{ name: "HttpOnly" }] } }), [
      { name: "v1", labels: { version: "v1" }, trafficPolicy: hashOn({ httpQueryParameterName: "u" }) },
      { name: "v2", labels: { version: "v2" }, trafficPolicy: hashOn({ useSourceIp: true }) },
    ]),
    dr("httpbin", { host: HTTPBIN, trafficPolicy: hashOn({ httpHeaderName: "x-client" }) }),
    dr("reviews", {
      host: "reviews",
      trafficPolicy: hashOn({ httpHeaderName: "x-user" }),
      subsets: ["v1", "v2", "v3"].map((v) => ({ name: v, labels: { version: v } })),
    }),
  )
  const { config } = sidecarWith(rules)

  it("every route configuration passes the proxy's protos", () => {
    expectConformant(TypeUrl.Route, config.routes.resources)
  })

  it("a route carries a hash key exactly when one of its clusters hashes on a key", () => {
    const hashing = new Set(
      config.clusters.resources
        .filter((c) => c.lb_policy === "RING_HASH" || c.lb_policy === "MAGLEV")
        .map((c) => String(c.name)),
    )
    let checked = 0
    for (const rc of config.routes.resources)
      for (const vh of arr(rc.virtual_hosts))
        for (const r of arr(vh.routes)) {
          const action = obj(r.route)
          if (action === undefined) continue
          const clusters = [
            ...(action.cluster !== undefined ? [String(action.cluster)] : []),
            ...arr(obj(action.weighted_clusters)?.clusters).map((c) => String(c.name)),
          ]
          const expected = clusters.filter((c) => hashing.has(c)).length
          expect(arr(action.hash_policy).length, `${String(rc.name)} ${String(vh.name)} ${String(r.name)}`).toBe(
            expected,
          )
          checked += expected
        }
    // ratings (sidecar and api delegate), reviews (jason and the split), httpbin
    expect(checked).toBeGreaterThanOrEqual(6)
  })
})

describe("cache keys", () => {
  const routeKeys = (rules: ReturnType<typeof withRules>, proxy = productpageSidecar()) => {
    const config = proxyConfig(meshPush({ destinationRules: rules }), proxy)
    return new Map(config.routes.keys.map((k) => [k.slice(0, k.indexOf("=")), k]))
  }
  const base = routeKeys(destinationRules)

  it("a hash key change changes the keys of the route configurations routing to the host", () => {
    const changed = routeKeys(withRules(ratingsRule(hashOn({ httpHeaderName: "x-session" }))))
    // ratings is served on 9080 (its own routes) and reached through api on 8080.
    expect(changed.get("9080")).not.toBe(base.get("9080"))
    expect(changed.get("8080")).not.toBe(base.get("8080"))
  })

  it("a change the routes do not read (outlier detection, ring size) leaves the RDS keys", () => {
    const rule = ratingsRule({
      loadBalancer: { consistentHash: { httpHeaderName: "x-user", ringHash: { minimumRingSize: 4096 } } },
      outlierDetection: { consecutive5xxErrors: 7 },
    })
    expect(routeKeys(withRules(rule))).toEqual(base)
  })

  it("a rule selecting workloads by label: other labels, other routes and other keys", () => {
    const selected = dr("ratings-selected", {
      host: "ratings.default.svc.cluster.local",
      workloadSelector: { matchLabels: { app: "productpage" } },
      trafficPolicy: hashOn({ httpQueryParameterName: "selected" }),
      subsets: [{ name: "v1", labels: { version: "v1" } }],
    })
    const rules = withRules(selected)
    const other = proxyView(productpageSidecar().id, {
      ...productpageSidecar().metadata,
      LABELS: { app: "reviewer", version: "v1" },
    })!
    const routeOf = (config: ReturnType<typeof proxyConfig>) =>
      obj(
        (
          outboundHttp({
            listeners: config.listeners.resources,
            routes: config.routes.resources,
            port: 9080,
            host: "ratings",
          }) as { route: Obj }
        ).route.route,
      )?.hash_policy
    // One push asked by productpage first, then by the other workload; another by the other alone.
    const shared = meshPush({ destinationRules: rules })
    const mine = proxyConfig(shared, productpageSidecar())
    const theirs = proxyConfig(shared, other)
    const alone = proxyConfig(meshPush({ destinationRules: rules }), other)
    expect(routeOf(mine)).toEqual([{ query_parameter: { name: "selected" } }])
    expect(routeOf(theirs)).toEqual([{ header: { header_name: "x-user" } }])
    const key = (c: ReturnType<typeof proxyConfig>) => c.routes.keys.find((k) => k.startsWith("9080="))
    expect(key(mine)).not.toBe(key(theirs))
    // Nothing built for productpage leaked into what the other workload got.
    expect(theirs.routes.resources).toEqual(alone.routes.resources)
    expect(theirs.routes.keys).toEqual(alone.routes.keys)
  })
})
