/**
 * The conversion's output fed unchanged to the proxy generators: a router proxy carrying the
 * gateway-name label gets the generated Gateway's listeners and routes, and the evaluator says
 * where requests go (segment-wise prefixes, header matches, weights, redirects, hostnames, a
 * TCP listener); a sidecar gets the routes of an HTTPRoute whose parent is a Service.
 */
import { describe, expect, it } from "@effect/vitest"
import { proxyView } from "../../../src/services/xds/proxygen/proxy-view.js"
import { outboundHttp, outboundTcp } from "../../support/proxygen/evaluator.js"
import {
  meshInput,
  meshPush,
  PRODUCTPAGE,
  productpageSidecar,
  proxyConfig,
  RATINGS,
  REVIEWS,
} from "../xds/proxygen/scenarios/mesh.js"
import { convert, gateway, httpRoute, schemaProblems, tcpRoute } from "./fixtures.js"

const cluster = (host: string, port = 9080) => `outbound|${port}||${host}`

const converted = convert({
  services: meshInput().services,
  gateways: [
    gateway(
      "edge",
      {
        listeners: [
          {
            name: "web",
            port: 8080,
            protocol: "HTTP",
            hostname: "*.example.com",
            allowedRoutes: { namespaces: { from: "All" } },
          },
          { name: "db", port: 9000, protocol: "TCP", allowedRoutes: { namespaces: { from: "All" } } },
        ],
      },
      { namespace: "edge" },
    ),
  ],
  httpRoutes: [
    httpRoute("bookinfo", {
      parentRefs: [{ name: "edge", namespace: "edge" }],
      hostnames: ["bookinfo.example.com"],
      rules: [
        {
          matches: [{ path: { type: "PathPrefix", value: "/reviews" } }],
          backendRefs: [{ name: "reviews", port: 9080 }],
        },
        {
          matches: [{ headers: [{ name: "x-ratings", value: "yes" }] }],
          backendRefs: [
            { name: "ratings", port: 9080, weight: 3 },
            { name: "reviews", port: 9080, weight: 1 },
          ],
        },
        {
          matches: [{ path: { type: "Exact", value: "/old" } }],
          filters: [
            {
              type: "RequestRedirect",
              requestRedirect: { path: { type: "ReplaceFullPath", replaceFullPath: "/new" } },
            },
          ],
        },
        { backendRefs: [{ name: "productpage", port: 9080 }] },
      ],
    }),
    httpRoute("reviews-mesh", {
      parentRefs: [{ group: "", kind: "Service", name: "reviews" }],
      rules: [
        { matches: [{ path: { type: "PathPrefix", value: "/v2" } }], backendRefs: [{ name: "ratings", port: 9080 }] },
        { backendRefs: [{ name: "reviews", port: 9080 }] },
      ],
    }),
  ],
  tcpRoutes: [
    tcpRoute("db", {
      parentRefs: [{ name: "edge", namespace: "edge" }],
      rules: [{ backendRefs: [{ name: "mysql", port: 3306 }] }],
    }),
  ],
})

const push = meshPush({
  virtualServices: converted.virtualServices,
  proxyConfig: { gateways: converted.gateways },
})

const edgeRouter = proxyView("router~10.0.30.1~edge-7c9d.edge~edge.svc.cluster.local", {
  NAMESPACE: "edge",
  LABELS: { "gateway.networking.k8s.io/gateway-name": "edge" },
  INSTANCE_IPS: "10.0.30.1",
  SERVICE_ACCOUNT: "edge",
})!

describe("a router applying the generated Gateway", () => {
  const config = proxyConfig(push, edgeRouter)
  const request = (path: string, headers: Record<string, string> = {}, host = "bookinfo.example.com") =>
    outboundHttp({
      listeners: config.listeners.resources,
      routes: config.routes.resources,
      port: 8080,
      host,
      path,
      headers,
    })

  it("the output is valid mesh config", () => {
    expect(schemaProblems(converted)).toEqual([])
  })

  it("a PathPrefix reaches its backend on whole segments only", () => {
    expect(request("/reviews")).toMatchObject({ kind: "route", cluster: cluster(REVIEWS) })
    expect(request("/reviews/7")).toMatchObject({ kind: "route", cluster: cluster(REVIEWS) })
    expect(request("/reviewsX")).toMatchObject({ kind: "route", cluster: cluster(PRODUCTPAGE) })
  })

  it("a header match splits by weight; a redirect answers; everything else reaches the catch-all rule", () => {
    expect(request("/", { "X-Ratings": "yes" })).toMatchObject({
      weightedClusters: [
        { name: cluster(RATINGS), weight: 75 },
        { name: cluster(REVIEWS), weight: 25 },
      ],
    })
    expect(request("/old")).toMatchObject({
      kind: "route",
      redirect: { path_redirect: "/new", response_code: "FOUND" },
    })
    expect(request("/productpage")).toMatchObject({ kind: "route", cluster: cluster(PRODUCTPAGE) })
  })

  it("a host the route does not name is not routed (404)", () => {
    // The TCPRoute's VirtualService (hosts `*`) leaves an empty `*.example.com` virtual host: no route either way.
    expect(["no-route", "no-virtual-host"]).toContain(request("/reviews", {}, "other.example.com").kind)
    expect(request("/reviews", {}, "bookinfo.example.com").kind).toBe("route")
  })

  it("the TCP listener forwards to the TCPRoute's backend", () => {
    expect(outboundTcp({ listeners: config.listeners.resources, vip: "10.0.30.1", port: 9000 })).toMatchObject({
      cluster: cluster("mysql.default.svc.cluster.local", 3306),
    })
  })
})

describe("a sidecar applying an HTTPRoute whose parent is a Service", () => {
  it("requests to the Service follow the route's rules", () => {
    const config = proxyConfig(push, productpageSidecar())
    const ask = (path: string) =>
      outboundHttp({
        listeners: config.listeners.resources,
        routes: config.routes.resources,
        port: 9080,
        host: "reviews:9080",
        path,
      })
    expect(ask("/v2/x")).toMatchObject({ kind: "route", cluster: cluster(RATINGS) })
    expect(ask("/v1")).toMatchObject({ kind: "route", cluster: cluster(REVIEWS) })
  })
})
