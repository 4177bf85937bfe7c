import { describe, expect, it } from "@effect/vitest"
import type { ProtoObject } from "../../../../../src/services/xds/cache/resource-spec.js"
import { makePushContext } from "../../../../../src/services/xds/model/push-context.js"
import { collapseVirtualHosts, routeHostDomains } from "../../../../../src/services/xds/proxygen/routes/domains.js"
import { defaultHttpRoute, httpRoutesFor } from "../../../../../src/services/xds/proxygen/routes/http-route.js"
import { tcpRouteCluster, tlsRoutes } from "../../../../../src/services/xds/proxygen/routes/l4-routes.js"
import { virtualServicesForProxy } from "../../../../../src/services/xds/proxygen/routes/virtual-services.js"
import { input, service, virtualService } from "../../../../fixtures/xds/mesh.js"
import { checkResource } from "../../../../support/proxygen/check.js"

const REVIEWS = "reviews.default.svc.cluster.local"
const DB = "db.data.svc.cluster.local"

describe("routeHostDomains", () => {
  const push = makePushContext(
    input({
      services: [
        { ...service(REVIEWS, [9080]), addresses: ["10.0.0.5", "fd00::5"] },
        service(DB, [3306], "data"),
        service("api.example.com", [443]),
      ],
    }),
  )

  it("same namespace: host, short name, name.ns.svc, name.ns and VIPs, each with and without the port", () => {
    expect(routeHostDomains(REVIEWS, 9080, push, "default")).toEqual([
      REVIEWS,
      `${REVIEWS}:9080`,
      "reviews",
      "reviews:9080",
      "reviews.default.svc",
      "reviews.default.svc:9080",
      "reviews.default",
      "reviews.default:9080",
      "10.0.0.5",
      "10.0.0.5:9080",
      "[fd00::5]",
      "[fd00::5]:9080",
    ])
  })

  it("other namespace: no bare short name; external hosts: no short forms", () => {
    expect(routeHostDomains(DB, 3306, push, "default")).toEqual([
      DB,
      `${DB}:3306`,
      "db.data",
      "db.data:3306",
      "db.data.svc",
      "db.data.svc:3306",
    ])
    expect(routeHostDomains("api.example.com", 443, push, "default")).toEqual([
      "api.example.com",
      "api.example.com:443",
    ])
  })
})

describe("collapseVirtualHosts", () => {
  it("merges virtual hosts with identical routes into the first, domains unioned in order", () => {
    const route = defaultHttpRoute(REVIEWS, 80)
    const other = defaultHttpRoute(DB, 80)
    const vhosts: ReadonlyArray<ProtoObject> = [
      { name: "a:80", domains: ["a", "a:80"], routes: [route] },
      { name: "b:80", domains: ["b", "b:80"], routes: [other] },
      { name: "c:80", domains: ["c", "a"], routes: [route] },
    ]
    expect(collapseVirtualHosts(vhosts)).toEqual([
      { name: "a:80", domains: ["a", "a:80", "c"], routes: [route] },
      { name: "b:80", domains: ["b", "b:80"], routes: [other] },
    ])
  })
})

describe("TCP and TLS routes", () => {
  const push = makePushContext(
    input({
      services: [service(DB, [3306], "data"), service(REVIEWS, [9080])],
      virtualServices: [
        virtualService("db", {
          hosts: ["db.data.svc.cluster.local"],
          tcp: [
            { match: [{ port: 3307 }], route: [{ destination: { host: DB } }] },
            {
              match: [{ destinationSubnets: ["10.1.0.0/16"] }],
              route: [
                { destination: { host: DB, subset: "primary" }, weight: 90 },
                { destination: { host: DB, subset: "replica" }, weight: 10 },
              ],
            },
            { route: [{ destination: { host: "gone.example.com", port: { number: 3306 } } }] },
          ],
          tls: [
            {
              match: [
                { sniHosts: ["a.example.com"], port: 443 },
                { sniHosts: ["b.example.com"], port: 8443 },
              ],
              route: [{ destination: { host: "reviews" } }],
            },
          ],
        }),
      ],
    }),
  )
  const [vs] = virtualServicesForProxy(push, { namespace: "default" })

  it("tcpRouteCluster: the first tcp route whose match applies to the port and destination", () => {
    expect(tcpRouteCluster(push, vs!, 3307)?.tcpProxy).toEqual({ cluster: `outbound|3306||${DB}` })
    expect(tcpRouteCluster(push, vs!, 3306, "10.1.2.3")?.tcpProxy).toEqual({
      weighted_clusters: {
        clusters: [
          { name: `outbound|3306|primary|${DB}`, weight: 90 },
          { name: `outbound|3306|replica|${DB}`, weight: 10 },
        ],
      },
    })
    const fallback = tcpRouteCluster(push, vs!, 3306, "10.2.0.1")
    expect(fallback?.tcpProxy).toEqual({ cluster: "outbound|3306||gone.example.com" })
    expect(fallback?.warnings[0]?.message).toContain("field tcp[2].route[0].destination.host: gone.example.com")
  })

  it("tlsRoutes: one entry per match applying to the port, with its SNI hosts", () => {
    expect(tlsRoutes(push, vs!, 443)).toEqual([
      {
        sniHosts: ["a.example.com"],
        destinationSubnets: [],
        tcpProxy: { cluster: `outbound|9080||${REVIEWS}` },
        clusters: [`outbound|9080||${REVIEWS}`],
        warnings: [],
      },
    ])
    expect(tlsRoutes(push, vs!, 80)).toEqual([])
  })
})

describe("conformance", () => {
  it("a route configuration with every action passes the proxy's proto shape and validate.rules", () => {
    const push = makePushContext(
      input({
        services: [service(REVIEWS, [9080])],
        virtualServices: [
          virtualService("reviews", {
            hosts: ["reviews"],
            http: [
              {
                name: "everything",
                match: [
                  { uri: { prefix: "/a" }, headers: { x: { exact: "1" } }, queryParams: { q: { regex: "v.*" } } },
                ],
                route: [
                  {
                    destination: { host: "reviews", subset: "v1" },
                    weight: 50,
                    headers: { request: { set: { a: "b" } } },
                  },
                  { destination: { host: "reviews", subset: "v2" }, weight: 50 },
                ],
                rewrite: { uri: "/b", authority: "x" },
                timeout: "3s",
                retries: { attempts: 3, perTryTimeout: "1s", retryOn: "5xx,429", retryRemoteLocalities: true },
                fault: {
                  delay: { fixedDelay: "1s", percentage: { value: 10 } },
                  abort: { grpcStatus: "INTERNAL", percentage: { value: 1 } },
                },
                mirrors: [{ destination: { host: "reviews", subset: "v3" }, percentage: { value: 5 } }],
                corsPolicy: {
                  allowOrigins: [{ prefix: "https://" }],
                  allowMethods: ["GET"],
                  maxAge: "1m",
                  allowCredentials: false,
                },
                headers: { response: { add: { h: "v" }, remove: ["server"] } },
              },
              {
                match: [{ uri: { exact: "/r" } }],
                redirect: { uri: "/s", scheme: "https", port: 443, redirectCode: 307 },
              },
              {
                match: [{ uri: { regex: "/d.*" }, ignoreUriCase: true }],
                directResponse: { status: 404, body: { string: "no" } },
              },
              { route: [{ destination: { host: "reviews" } }] },
            ],
          }),
        ],
      }),
    )
    const [vs] = virtualServicesForProxy(push, { namespace: "default" })
    const { routes } = httpRoutesFor(push, vs!, { port: 9080, sourceLabels: {}, sourceNamespace: "default" })
    expect(routes).toHaveLength(4)
    const config = {
      name: "9080",
      virtual_hosts: [
        { name: `${REVIEWS}:9080`, domains: routeHostDomains(REVIEWS, 9080, push, "default"), routes },
        { name: "default", domains: ["*"], routes: [defaultHttpRoute(REVIEWS, 9080)] },
      ],
      validate_clusters: { value: false },
    }
    const problems = checkResource("type.googleapis.com/envoy.config.route.v3.RouteConfiguration", config)
    expect(problems).toEqual([])
  }, 120_000)
})
