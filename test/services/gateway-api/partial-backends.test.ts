/**
 * Issue 36 group 7: a rule with some unresolvable backends (missing, not permitted, unsupported
 * kind) keeps serving through the valid ones; only the invalid ones' weight share answers 500
 * (an abort fault of that percentage). A malformed backend (no port), or every weighted backend
 * invalid, still fails the whole rule. Checked on the VirtualService and on a router fed with it.
 */
import { describe, expect, it } from "@effect/vitest"
import type { HTTPRouteRule } from "../../../src/services/config-model/schemas/gateway-api/types.js"
import { proxyView } from "../../../src/services/xds/proxygen/proxy-view.js"
import { outboundHttp } from "../../support/proxygen/evaluator.js"
import { meshInput, meshPush, proxyConfig, RATINGS, REVIEWS } from "../xds/proxygen/scenarios/mesh.js"
import {
  convert,
  grpcRoute,
  httpRoute,
  parentConditions,
  parentGw,
  routeStatusOf,
  schemaProblems,
  service,
  simpleGateway,
  vsForHost,
} from "./fixtures.js"

const BACKEND = "backend.default.svc.cluster.local"
const OTHER = "other.apps.svc.cluster.local"
const to = (host: string, port = 8080) => ({ host, port: { number: port } })

const rulesOf = (rules: ReadonlyArray<HTTPRouteRule>) => {
  const out = convert({
    gateways: [simpleGateway()],
    services: [service("backend"), service("other", "apps")],
    httpRoutes: [httpRoute("r", { parentRefs: [parentGw], hostnames: ["h.example.com"], rules })],
  })
  expect(schemaProblems(out)).toEqual([])
  return { out, http: vsForHost(out, "h.example.com").spec.http ?? [] }
}

describe("partly invalid backends", () => {
  it("a missing Service beside a valid one: the valid one takes its own share, the missing one's share is a 500 abort", () => {
    const { out, http } = rulesOf([
      {
        backendRefs: [
          { name: "backend", port: 8080, weight: 3 },
          { name: "ghost", port: 8080, weight: 1 },
        ],
      },
    ])
    expect(http[0]!.directResponse).toBeUndefined()
    expect(http[0]!.route).toEqual([{ destination: to(BACKEND) }])
    expect(http[0]!.fault).toEqual({ abort: { httpStatus: 500, percentage: { value: 25 } } })
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "r"))).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=False/BackendNotFound",
    ])
  })

  it("several valid backends keep their relative weights; not-permitted and unsupported-kind backends count as invalid", () => {
    const { http } = rulesOf([
      {
        backendRefs: [
          { name: "backend", port: 8080, weight: 2 },
          { name: "backend", port: 9090, weight: 2 },
          // Another namespace without a ReferenceGrant, and a kind the mesh does not route to.
          { name: "other", namespace: "apps", port: 8080, weight: 1 },
          { group: "example.com", kind: "Bucket", name: "b", port: 1, weight: 1 },
        ],
      },
    ])
    expect(http[0]!.route).toEqual([
      { destination: to(BACKEND), weight: 50 },
      { destination: to(BACKEND, 9090), weight: 50 },
    ])
    // 2 of a total weight of 6.
    expect(http[0]!.fault).toEqual({ abort: { httpStatus: 500, percentage: { value: 33.3333 } } })
  })

  it("every weighted backend invalid, or a backend without a port: the whole rule answers 500", () => {
    const { out, http } = rulesOf([
      {
        matches: [{ path: { type: "Exact", value: "/all-missing" } }],
        backendRefs: [
          { name: "ghost", port: 8080 },
          { name: "backend", port: 8080, weight: 0 },
        ],
      },
      {
        matches: [{ path: { type: "Exact", value: "/no-port" } }],
        backendRefs: [{ name: "backend", port: 8080 }, { name: "backend" }],
      },
    ])
    expect(http.map((h) => [h.match?.[0]?.uri?.exact, h.directResponse, h.fault])).toEqual([
      ["/all-missing", { status: 500 }, undefined],
      ["/no-port", { status: 500 }, undefined],
    ])
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "r"))[1]).toBe("ResolvedRefs=False/BackendNotFound")
  })

  it("an invalid backend of weight 0 takes no share: no abort", () => {
    const { http } = rulesOf([
      {
        backendRefs: [
          { name: "backend", port: 8080 },
          { name: "ghost", port: 8080, weight: 0 },
        ],
      },
    ])
    expect(http[0]!.fault).toBeUndefined()
    expect(http[0]!.route).toEqual([{ destination: to(BACKEND) }])
  })

  it("a GRPCRoute rule splits the same way", () => {
    const out = convert({
      gateways: [simpleGateway()],
      grpcRoutes: [
        grpcRoute("g", {
          parentRefs: [parentGw],
          hostnames: ["g.example.com"],
          rules: [
            {
              backendRefs: [
                { name: "backend", port: 8080 },
                { name: "other", namespace: "apps", port: 8080 },
              ],
            },
          ],
        }),
      ],
    })
    expect(schemaProblems(out)).toEqual([])
    const [rule] = vsForHost(out, "g.example.com").spec.http!
    expect(rule!.route).toEqual([{ destination: to(BACKEND) }])
    expect(rule!.fault).toEqual({ abort: { httpStatus: 500, percentage: { value: 50 } } })
    expect(parentConditions(routeStatusOf(out, "GRPCRoute", "g"))[1]).toBe("ResolvedRefs=False/RefNotPermitted")
    // The unresolvable Service is not named anywhere in the output.
    expect(JSON.stringify(out.virtualServices)).not.toContain(OTHER)
  })

  it("a router fed the conversion aborts the invalid share with 500 and splits the rest among the valid backends", () => {
    const converted = convert({
      services: meshInput().services,
      gateways: [
        simpleGateway([{ name: "web", port: 8080, protocol: "HTTP", allowedRoutes: { namespaces: { from: "All" } } }]),
      ],
      httpRoutes: [
        httpRoute("split", {
          parentRefs: [parentGw],
          hostnames: ["shop.example.com"],
          rules: [
            {
              backendRefs: [
                { name: "ratings", port: 9080, weight: 2 },
                { name: "reviews", port: 9080, weight: 1 },
                { name: "ghost", port: 9080, weight: 1 },
              ],
            },
          ],
        }),
      ],
    })
    expect(schemaProblems(converted)).toEqual([])
    const push = meshPush({ virtualServices: converted.virtualServices, proxyConfig: { gateways: converted.gateways } })
    const router = proxyView("router~10.0.30.1~gw-1.infra~infra.svc.cluster.local", {
      NAMESPACE: "infra",
      LABELS: { "gateway.networking.k8s.io/gateway-name": "gw" },
      INSTANCE_IPS: "10.0.30.1",
      SERVICE_ACCOUNT: "gw",
    })!
    const config = proxyConfig(push, router)
    const hit = outboundHttp({
      listeners: config.listeners.resources,
      routes: config.routes.resources,
      port: 8080,
      host: "shop.example.com",
      path: "/",
      headers: {},
    })
    expect(hit).toMatchObject({
      kind: "route",
      weightedClusters: [
        { name: `outbound|9080||${RATINGS}`, weight: 67 },
        { name: `outbound|9080||${REVIEWS}`, weight: 33 },
      ],
      fault: { abort: { httpStatus: 500, percent: 25 } },
    })
  })
})
