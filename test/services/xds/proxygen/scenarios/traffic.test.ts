/**
 * Traffic management as the reference's task docs describe it, asked of the evaluator over what
 * the dispatcher gives the productpage sidecar: request routing (end-user header), traffic
 * shifting (weights), fault injection (delay / abort), request timeouts and retries, redirect /
 * rewrite / mirror, delegate VirtualServices, TCP and TLS routing by VIP and SNI.
 */
import { describe, expect, it } from "@effect/vitest"
import { type OutboundHttpOutcome, outboundHttp, outboundTcp } from "../../../../support/proxygen/evaluator.js"
import type { Obj } from "../../../../support/proxygen/matchers.js"
import {
  API,
  DETAILS,
  destinationRules,
  dr,
  GRPC_ECHO,
  HEADLESS,
  HTTPBIN,
  MYSQL,
  meshPush,
  mysqlTcp,
  PRODUCTPAGE,
  productpageSidecar,
  proxyConfig,
  RATINGS,
  REVIEWS,
  reviewsRouting,
  STATIC_EXT,
  TLS_SVC,
  VIP,
  virtualServices,
  vs,
} from "./mesh.js"

const cluster = (host: string, port: number, subset = "") => `outbound|${port}|${subset}|${host}`

const configOf = (push = meshPush()) => {
  const config = proxyConfig(push, productpageSidecar())
  const listeners = config.listeners.resources
  const routes = config.routes.resources
  const http = (
    host: string,
    port: number,
    request: { path?: string; headers?: Record<string, string>; ip?: string } = {},
  ) =>
    outboundHttp({
      listeners,
      routes,
      port,
      host,
      ...(request.path !== undefined ? { path: request.path } : {}),
      ...(request.headers !== undefined ? { headers: request.headers } : {}),
      ...(request.ip !== undefined ? { destinationIp: request.ip } : {}),
    })
  return { config, listeners, routes, http }
}

const routed = (outcome: OutboundHttpOutcome) => {
  if (outcome.kind !== "route") throw new Error(`expected a route, got ${outcome.kind}`)
  return outcome
}

describe("request routing and traffic shifting (reviews)", () => {
  const { http } = configOf()

  it("end-user: jason goes to v2", () => {
    expect(routed(http("reviews:9080", 9080, { headers: { "end-user": "jason" } })).cluster).toBe(
      cluster(REVIEWS, 9080, "v2"),
    )
  })

  it("everyone else is split 80/20 over v1/v3, whatever the name they use", () => {
    for (const name of ["reviews", "reviews:9080", REVIEWS, `${REVIEWS}:9080`, "reviews.default", VIP.reviews]) {
      const hit = routed(http(name, 9080, { headers: { "end-user": "someone" } }))
      expect(hit.weightedClusters, name).toEqual([
        { name: cluster(REVIEWS, 9080, "v1"), weight: 80 },
        { name: cluster(REVIEWS, 9080, "v3"), weight: 20 },
      ])
    }
  })

  it("routing by header only (the request-routing task): jason → v2, else v1", () => {
    const onlyHeader = vs("reviews", {
      hosts: ["reviews"],
      http: [
        {
          match: [{ headers: { "end-user": { exact: "jason" } } }],
          route: [{ destination: { host: "reviews", subset: "v2" } }],
        },
        { route: [{ destination: { host: "reviews", subset: "v1" } }] },
      ],
    })
    const { http } = configOf(
      meshPush({ virtualServices: [...virtualServices.filter((v) => v !== reviewsRouting), onlyHeader] }),
    )
    expect(routed(http("reviews", 9080, { headers: { "end-user": "jason" } })).cluster).toBe(
      cluster(REVIEWS, 9080, "v2"),
    )
    expect(routed(http("reviews", 9080, { headers: { "end-user": "Jason" } })).cluster).toBe(
      cluster(REVIEWS, 9080, "v1"),
    )
    expect(routed(http("reviews", 9080)).cluster).toBe(cluster(REVIEWS, 9080, "v1"))
  })

  it("the subset clusters and their endpoints exist", () => {
    const { config } = configOf()
    for (const subset of ["v1", "v2", "v3"]) {
      expect(config.clusters.names).toContain(cluster(REVIEWS, 9080, subset))
      const eds = config.endpoints.resources.find((e) => e.cluster_name === cluster(REVIEWS, 9080, subset)) as Obj
      const ips = JSON.stringify(eds)
      expect(ips).toContain(`10.0.1.${subset.slice(1)}`)
    }
  })
})

describe("fault injection (ratings)", () => {
  const { http, listeners } = configOf()

  it("jason's requests are delayed 7 s, all of them", () => {
    const hit = routed(http("ratings", 9080, { headers: { "end-user": "jason" } }))
    expect(hit.cluster).toBe(cluster(RATINGS, 9080, "v1"))
    expect(hit.fault?.delay).toEqual({ seconds: 7, percent: 100 })
    expect(hit.fault?.abort).toBeUndefined()
  })

  it("the tester's requests are aborted with HTTP 500", () => {
    const hit = routed(http("ratings", 9080, { headers: { "end-user": "tester" } }))
    expect(hit.fault?.abort).toMatchObject({ httpStatus: 500, percent: 100 })
    expect(hit.fault?.delay).toBeUndefined()
  })

  it("other users get no fault", () => {
    const hit = routed(http("ratings", 9080))
    expect(hit.cluster).toBe(cluster(RATINGS, 9080, "v1"))
    expect(hit.fault).toBeUndefined()
  })

  it("the listener's HTTP filters include the fault filter, before the router", () => {
    const hit = http("ratings", 9080)
    const chain = (hit as { listener?: Obj }).listener
    const text = JSON.stringify(chain ?? listeners)
    expect(text.indexOf("envoy.filters.http.fault")).toBeGreaterThan(-1)
    expect(text.indexOf("envoy.filters.http.fault")).toBeLessThan(text.indexOf("envoy.filters.http.router"))
  })
})

describe("request timeouts and retries (details)", () => {
  const { http } = configOf()

  it("10 s timeout, 3 attempts of 2 s on 5xx and connect failures", () => {
    const hit = routed(http("details", 9080))
    expect(hit.cluster).toBe(cluster(DETAILS, 9080))
    expect(hit.timeoutSeconds).toBe(10)
    expect(hit.retries).toMatchObject({ attempts: 3, perTryTimeoutSeconds: 2 })
    expect(hit.retries?.retryOn?.split(",")).toEqual(expect.arrayContaining(["5xx", "connect-failure"]))
  })

  it("without a VirtualService: no timeout, the mesh's default retries (2 attempts)", () => {
    const hit = routed(http("grpc-echo:7070", 7070))
    expect(hit.cluster).toBe(cluster(GRPC_ECHO, 7070))
    expect(hit.timeoutSeconds).toBe(0)
    expect(hit.retries?.attempts).toBe(2)
  })
})

describe("redirect, rewrite, mirror, CORS (productpage)", () => {
  const { http } = configOf()

  it("/legacy is redirected to /productpage with 301", () => {
    const hit = routed(http("productpage", 9080, { path: "/legacy/index.html" }))
    expect(hit.redirect).toMatchObject({ path_redirect: "/productpage", response_code: "MOVED_PERMANENTLY" })
    expect(hit.cluster).toBeUndefined()
  })

  it("/api/v1/ is rewritten to /api/ with a new authority, 10% mirrored to v2", () => {
    const hit = routed(http("productpage", 9080, { path: "/api/v1/books" }))
    expect(hit.cluster).toBe(cluster(PRODUCTPAGE, 9080, "v1"))
    expect(hit.prefixRewrite).toBe("/api/")
    expect(hit.hostRewrite).toBe("productpage-internal")
    expect(hit.mirrors).toEqual([cluster(PRODUCTPAGE, 9080, "v2")])
    expect((hit.route as Obj).route).toMatchObject({
      request_mirror_policies: [
        { runtime_fraction: { default_value: { numerator: 100_000, denominator: "MILLION" } } },
      ],
    })
  })

  it("the rest goes to v1 with CORS and header edits", () => {
    const hit = routed(http("productpage", 9080, { path: "/" }))
    expect(hit.cluster).toBe(cluster(PRODUCTPAGE, 9080, "v1"))
    const route = hit.route as Obj
    expect(JSON.stringify(route.typed_per_filter_config ?? {})).toContain("https://bookinfo.example.com")
    expect(route.request_headers_to_add).toEqual([
      expect.objectContaining({ header: { key: "x-from", value: "mesh" } }),
    ])
    expect(route.response_headers_to_remove).toEqual(["x-internal"])
  })
})

describe("delegate VirtualService (api)", () => {
  const { http } = configOf()

  it("the delegate's routes take over under the parent's match", () => {
    expect(routed(http("api:8080", 8080, { path: "/ratings/v2/1" })).cluster).toBe(cluster(RATINGS, 9080, "v2"))
    expect(routed(http("api:8080", 8080, { path: "/ratings/1" })).cluster).toBe(cluster(RATINGS, 9080, "v1"))
    expect(routed(http("api:8080", 8080, { path: "/other" })).cluster).toBe(cluster(API, 8080))
  })

  it("a delegate alone (no hosts) routes nothing by itself", () => {
    const { routes } = configOf()
    const domains = routes.flatMap((r) => (r.virtual_hosts as ReadonlyArray<Obj>).flatMap((v) => v.domains as string[]))
    expect(domains.some((d) => d.startsWith("api-ratings"))).toBe(false)
  })
})

describe("TCP, TLS, auto-protocol, headless and external services", () => {
  const { http, listeners } = configOf()

  it("TCP: the VIP's listener proxies to the service's cluster", () => {
    expect(outboundTcp({ listeners, vip: VIP.mysql, port: 3306 })).toMatchObject({
      kind: "cluster",
      cluster: cluster(MYSQL, 3306),
    })
  })

  it("TLS: routed by SNI on the VIP", () => {
    expect(outboundTcp({ listeners, vip: VIP.tlsSvc, port: 8443, sni: TLS_SVC })).toMatchObject({
      kind: "cluster",
      cluster: cluster(TLS_SVC, 8443),
    })
  })

  it("auto-protocol: HTTP is routed by Host, raw TCP goes to the same service", () => {
    const hit = outboundHttp({
      listeners,
      routes: configOf().routes,
      port: 8000,
      host: "auto:8000",
      destinationIp: VIP.auto,
    })
    expect(routed(hit).cluster).toBe(cluster("auto.default.svc.cluster.local", 8000))
    expect(outboundTcp({ listeners, vip: VIP.auto, port: 8000 })).toMatchObject({
      cluster: cluster("auto.default.svc.cluster.local", 8000),
    })
  })

  it("headless HTTP: routed by Host on 0.0.0.0_<port>; headless TCP: per endpoint IP to the original destination", () => {
    expect(routed(http(`headless:8080`, 8080)).cluster).toBe(cluster(HEADLESS, 8080))
    expect(outboundTcp({ listeners, vip: "10.0.5.1", port: 5432 })).toMatchObject({ cluster: cluster(HEADLESS, 5432) })
  })

  it("ServiceEntries: DNS and STATIC hosts are routed to their clusters", () => {
    expect(routed(http(HTTPBIN, 80)).cluster).toBe(cluster(HTTPBIN, 80))
    expect(routed(http(`${STATIC_EXT}:8080`, 8080)).cluster).toBe(cluster(STATIC_EXT, 8080))
  })
})

describe("TCP traffic shifting and DestinationRule policies seen end to end", () => {
  it("a weighted TCP route splits connections 80/20 over the subsets (tcp-traffic-shifting task)", () => {
    const shifted = vs("mysql", {
      hosts: ["mysql"],
      tcp: [
        {
          match: [{ port: 3306 }],
          route: [
            { destination: { host: "mysql", subset: "v1" }, weight: 80 },
            { destination: { host: "mysql", subset: "v2" }, weight: 20 },
          ],
        },
      ],
    })
    const subsets = dr("mysql", {
      host: "mysql",
      subsets: [
        { name: "v1", labels: { version: "v1" } },
        { name: "v2", labels: { version: "v2" } },
      ],
    })
    const push = meshPush({
      virtualServices: [...virtualServices.filter((v) => v !== mysqlTcp), shifted],
      destinationRules: [...destinationRules.filter((d) => d.meta.name !== "mysql"), subsets],
    })
    const { listeners, config } = configOf(push)
    expect(outboundTcp({ listeners, vip: VIP.mysql, port: 3306 })).toMatchObject({
      kind: "weighted",
      clusters: [
        { name: cluster(MYSQL, 3306, "v1"), weight: 80 },
        { name: cluster(MYSQL, 3306, "v2"), weight: 20 },
      ],
    })
    expect(config.clusters.names).toEqual(
      expect.arrayContaining([cluster(MYSQL, 3306, "v1"), cluster(MYSQL, 3306, "v2")]),
    )
  })

  it("consistent hashing on a header: a ring hash cluster", () => {
    const { config } = configOf()
    const ratings = config.clusters.resources.find((c) => c.name === cluster(RATINGS, 9080, "v1")) as Obj
    expect(ratings.lb_policy).toBe("RING_HASH")
  })

  it("consistent hashing on a header: the route carries the hash policy", () => {
    const { http } = configOf()
    const hit = routed(http("ratings", 9080))
    expect((hit.route as Obj).route).toMatchObject({ hash_policy: [{ header: { header_name: "x-user" } }] })
  })

  it("a gRPC service's cluster speaks HTTP/2 upstream", () => {
    const { config } = configOf()
    const grpc = config.clusters.resources.find((c) => c.name === cluster(GRPC_ECHO, 7070)) as Obj
    expect(JSON.stringify(grpc.typed_extension_protocol_options)).toContain("http2_protocol_options")
  })
})
