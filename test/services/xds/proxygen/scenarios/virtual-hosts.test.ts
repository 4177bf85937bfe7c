/**
 * Which outbound virtual hosts a sidecar gets for VirtualService hosts, as the reference builds
 * them (issue 44 point 4): hosts that are no service only on port 80 (or on a port where the same
 * VirtualService routes a service), a wildcard host that matched services gives them its routes
 * but no virtual host of its own, a Sidecar's egress hosts choose the VirtualServices, and every
 * host of a VirtualService a Sidecar imports is served. Asked of the evaluator, as a request.
 */
import { describe, expect, it } from "@effect/vitest"
import { type OutboundHttpOutcome, outboundHttp } from "../../../../support/proxygen/evaluator.js"
import type { Obj } from "../../../../support/proxygen/matchers.js"
import {
  DETAILS,
  meshInput,
  meshPush,
  productpageSidecar,
  proxyConfig,
  RATINGS,
  REVIEWS,
  SLEEP,
  sleepProxy,
  svc,
  virtualServices,
  vs,
} from "./mesh.js"

const cluster = (host: string, port: number) => `outbound|${port}||${host}`

/** A service with no VirtualService of its own (every bookinfo one has). */
const ECHO = "echo.default.svc.cluster.local"

const configFor = (extra: ReadonlyArray<ReturnType<typeof vs>>, proxy = productpageSidecar()) => {
  const push = meshPush({
    services: [...meshInput().services, svc(ECHO, [["http", 9080, "HTTP"]], { addresses: ["10.96.0.40"] })],
    virtualServices: [...virtualServices, ...extra],
  })
  const config = proxyConfig(push, proxy)
  const listeners = config.listeners.resources
  const routes = config.routes.resources
  const http = (host: string, port: number): OutboundHttpOutcome => outboundHttp({ listeners, routes, port, host })
  /** Every domain of a route configuration (virtual hosts alike may be merged into one). */
  const virtualHostNames = (route: string): ReadonlyArray<string> =>
    ((routes.find((r) => r.name === route)?.virtual_hosts ?? []) as ReadonlyArray<Obj>).flatMap((v) =>
      (v.domains as ReadonlyArray<string>).map(String),
    )
  return { http, virtualHostNames }
}

const clusterOf = (outcome: OutboundHttpOutcome): string | undefined =>
  outcome.kind === "route" ? (outcome.cluster ?? outcome.route.name?.toString()) : outcome.kind

describe("outbound virtual hosts for VirtualService hosts (issue 44)", () => {
  it("a host that is no service gets a virtual host on port 80 only", () => {
    const external = vs("external", {
      hosts: ["legacy.example.com"],
      http: [{ route: [{ destination: { host: "details" } }] }],
    })
    const { http, virtualHostNames } = configFor([external])
    expect(virtualHostNames("80")).toContain("legacy.example.com:80")
    expect(clusterOf(http("legacy.example.com", 80))).toBe(cluster(DETAILS, 9080))
    for (const port of ["8080", "9080"]) expect(virtualHostNames(port)).not.toContain(`legacy.example.com:${port}`)
    // On 8080 the request falls to the catch-all (ALLOW_ANY: passed through).
    expect(clusterOf(http("legacy.example.com", 8080))).toBe("PassthroughCluster")
  })

  it("...and on a port where the same VirtualService routes a service", () => {
    const both = vs("both", {
      hosts: ["echo", "ratings.example.com"],
      http: [{ route: [{ destination: { host: "details" } }] }],
    })
    const { http, virtualHostNames } = configFor([both])
    expect(virtualHostNames("9080")).toContain("ratings.example.com:9080")
    expect(clusterOf(http("ratings.example.com", 9080))).toBe(cluster(DETAILS, 9080))
    expect(virtualHostNames("8080")).not.toContain("ratings.example.com:8080")
  })

  it("a wildcard host that matched services routes them but has no virtual host; an exact host keeps its own routes", () => {
    const wildcard = vs("everything", {
      hosts: ["*.svc.cluster.local"],
      http: [{ route: [{ destination: { host: "details" } }] }],
    })
    const { http, virtualHostNames } = configFor([wildcard])
    for (const port of ["80", "8080", "9080"])
      expect(virtualHostNames(port)).not.toContain(`*.svc.cluster.local:${port}`)
    // echo has no VirtualService of its own: the wildcard's routes.
    expect(clusterOf(http("echo", 9080))).toBe(cluster(DETAILS, 9080))
    // reviews has its own: its routes (a weighted split over its subsets), not the wildcard's.
    const reviews = http("reviews", 9080)
    expect(reviews.kind).toBe("route")
    expect(JSON.stringify(reviews.kind === "route" ? reviews.weightedClusters : [])).toContain(REVIEWS)
    // A name no service has under the wildcard: the catch-all, not the wildcard's routes.
    expect(clusterOf(http("nothing.default.svc.cluster.local", 9080))).toBe("PassthroughCluster")
  })

  it("a wildcard host that matched no service keeps its virtual host on port 80", () => {
    const wildcard = vs("wild", {
      hosts: ["*.legacy.example.com"],
      http: [{ route: [{ destination: { host: "ratings" } }] }],
    })
    const { http, virtualHostNames } = configFor([wildcard])
    expect(virtualHostNames("80")).toContain("*.legacy.example.com:80")
    expect(clusterOf(http("a.legacy.example.com", 80))).toBe(cluster(RATINGS, 9080))
    expect(virtualHostNames("9080")).not.toContain("*.legacy.example.com:9080")
  })

  it("a Sidecar's egress hosts choose the VirtualServices; every host of one it imports is served", () => {
    // sleep's Sidecar imports ./*, default/reviews and mesh-system/*.
    const notImported = vs("legacy", {
      hosts: ["legacy.example.com"],
      http: [{ route: [{ destination: { host: "reviews" } }] }],
    })
    const imported = vs("reviews-names", {
      hosts: ["reviews.default.svc.cluster.local", "reviews.example.com"],
      http: [{ route: [{ destination: { host: "reviews.default.svc.cluster.local" } }] }],
    })
    const sleep = configFor([notImported, imported], sleepProxy())
    expect(sleep.virtualHostNames("80")).not.toContain("legacy.example.com:80")
    expect(sleep.virtualHostNames("80")).toContain("reviews.example.com:80")
    expect(sleep.virtualHostNames("9080")).toContain("reviews.example.com:9080")
    expect(clusterOf(sleep.http("reviews.example.com", 9080))).toBe(cluster(REVIEWS, 9080))
    // REGISTRY_ONLY: the host it does not import is refused by the catch-all.
    expect(clusterOf(sleep.http("legacy.example.com", 80))).toBe("block_all")
    // Its own namespace's service keeps its default route.
    expect(clusterOf(sleep.http("sleep.sleep", 80))).toBe(cluster(SLEEP, 80))
    // productpage, without a Sidecar, sees both.
    const productpage = configFor([notImported, imported])
    expect(productpage.virtualHostNames("80")).toEqual(
      expect.arrayContaining(["legacy.example.com:80", "reviews.example.com:80"]),
    )
  })
})
