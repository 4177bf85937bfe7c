/**
 * The output as a whole: status shapes (parents, controller, conditions with observedGeneration
 * and the caller's time), determinism (input order does not matter, same input → same output)
 * and a mixed configuration that the mesh's own schemas accept in full.
 */
import { describe, expect, it } from "@effect/vitest"
import type { GatewayApiInput } from "../../../src/services/gateway-api/convert.js"
import {
  CONTROLLER,
  convert,
  emptyInput,
  gateway,
  gatewayClass,
  grpcRoute,
  httpListener,
  httpRoute,
  NOW,
  parentGw,
  referenceGrant,
  routeStatusOf,
  schemaProblems,
  service,
  tcpRoute,
  tlsRoute,
} from "./fixtures.js"

const mixed: Partial<GatewayApiInput> = {
  gatewayClasses: [gatewayClass("mesh")],
  gateways: [
    gateway(
      "gw",
      {
        listeners: [
          httpListener("http"),
          httpListener("web", { hostname: "*.example.com", port: 8080 }),
          {
            name: "https",
            port: 443,
            protocol: "HTTPS",
            hostname: "secure.example.com",
            tls: { certificateRefs: [{ name: "cert", namespace: "certs" }] },
            allowedRoutes: { namespaces: { from: "All" } },
          },
          {
            name: "tls",
            port: 8443,
            protocol: "TLS",
            tls: { mode: "Passthrough" },
            allowedRoutes: { namespaces: { from: "All" } },
          },
          { name: "tcp", port: 9000, protocol: "TCP", allowedRoutes: { namespaces: { from: "All" } } },
        ],
        addresses: [{ value: "192.0.2.1" }],
      },
      { namespace: "infra", generation: 3 },
    ),
    gateway("second", { listeners: [httpListener("http", { hostname: "b.example.com" })] }, { namespace: "infra" }),
  ],
  httpRoutes: [
    httpRoute(
      "web",
      {
        parentRefs: [parentGw, { name: "second", namespace: "infra" }],
        hostnames: ["a.example.com", "b.example.com", "secure.example.com"],
        rules: [
          {
            matches: [{ path: { type: "PathPrefix", value: "/api" }, headers: [{ name: "x-v", value: "2" }] }],
            filters: [
              { type: "URLRewrite", urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/" } } },
            ],
            backendRefs: [
              { name: "backend", port: 8080, weight: 9 },
              { name: "other", namespace: "apps", port: 8080, weight: 1 },
            ],
            timeouts: { request: "3s" },
          },
          {
            filters: [{ type: "RequestRedirect", requestRedirect: { scheme: "https", statusCode: 301 } }],
          },
        ],
      },
      { generation: 4 },
    ),
    httpRoute(
      "late",
      {
        parentRefs: [parentGw],
        hostnames: ["a.example.com"],
        rules: [{ backendRefs: [{ name: "backend", port: 8080 }] }],
      },
      { created: "2024-06-01T00:00:00Z" },
    ),
    httpRoute("mesh", {
      parentRefs: [{ group: "", kind: "Service", name: "backend" }],
      rules: [{ matches: [{ method: "GET" }], backendRefs: [{ name: "backend", port: 8080 }] }],
    }),
  ],
  grpcRoutes: [
    grpcRoute("rpc", {
      parentRefs: [parentGw],
      hostnames: ["a.example.com"],
      rules: [{ matches: [{ method: { service: "s.S" } }], backendRefs: [{ name: "backend", port: 8080 }] }],
    }),
  ],
  tcpRoutes: [tcpRoute("db", { parentRefs: [parentGw], rules: [{ backendRefs: [{ name: "backend", port: 5432 }] }] })],
  tlsRoutes: [
    tlsRoute("pass", {
      parentRefs: [parentGw],
      hostnames: ["*.example.com", "x.example.com", "y.example.org"],
      rules: [{ backendRefs: [{ name: "backend", port: 443 }] }],
    }),
  ],
  referenceGrants: [
    referenceGrant(
      "routes",
      {
        from: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: "default" }],
        to: [{ group: "", kind: "Service" }],
      },
      { namespace: "apps" },
    ),
    referenceGrant(
      "certs",
      {
        from: [{ group: "gateway.networking.k8s.io", kind: "Gateway", namespace: "infra" }],
        to: [{ group: "", kind: "Secret" }],
      },
      { namespace: "certs" },
    ),
  ],
  services: [...emptyInput.services, service("extra", "apps")],
}

describe("status shapes", () => {
  it("a route's status lists each parent of this controller with Accepted and ResolvedRefs", () => {
    const out = convert(mixed)
    const status = routeStatusOf(out, "HTTPRoute", "web")
    expect(status.parents.map((p) => p.parentRef)).toEqual([parentGw, { name: "second", namespace: "infra" }])
    for (const parent of status.parents) {
      expect(parent.controllerName).toBe(CONTROLLER)
      expect(
        parent.conditions.map((c) => [c.type, c.status, c.reason, c.observedGeneration, c.lastTransitionTime]),
      ).toEqual([
        ["Accepted", "True", "Accepted", 4, NOW],
        ["ResolvedRefs", "True", "ResolvedRefs", 4, NOW],
      ])
      expect(parent.conditions.every((c) => typeof c.message === "string" && c.message !== "")).toBe(true)
    }
    expect(out.statuses.map((s) => `${s.kind}/${s.namespace}/${s.name}`)).toEqual([
      "GRPCRoute/default/rpc",
      "GatewayClass//mesh",
      "HTTPRoute/default/late",
      "HTTPRoute/default/mesh",
      "HTTPRoute/default/web",
      "KubernetesGateway/infra/gw",
      "KubernetesGateway/infra/second",
      "TCPRoute/default/db",
      "TLSRoute/default/pass",
    ])
    expect(out.statuses.find((s) => s.name === "gw")?.generation).toBe(3)
  })
})

describe("determinism", () => {
  it("the same input in another order gives identical output", () => {
    const reversed: Partial<GatewayApiInput> = Object.fromEntries(
      Object.entries(mixed).map(([key, value]) => [key, Array.isArray(value) ? [...value].reverse() : value]),
    )
    const a = convert(mixed)
    const b = convert(reversed)
    expect(JSON.stringify(b)).toBe(JSON.stringify(a))
    expect(JSON.stringify(convert(mixed))).toBe(JSON.stringify(a))
    expect(a.virtualServices.length).toBeGreaterThan(4)
  })
})

describe("validity", () => {
  it("every generated Gateway and VirtualService passes the mesh's own schemas", () => {
    const out = convert(mixed)
    expect(out.gateways.map((g) => g.meta.name)).toEqual([
      "gw-mesh-autogenerated-k8s-gateway",
      "second-mesh-autogenerated-k8s-gateway",
    ])
    expect(out.virtualServices.map((vs) => `${vs.meta.namespace}/${vs.meta.name} ${vs.spec.hosts?.join(",")}`)).toEqual(
      [
        "default/db-0-mesh-autogenerated-k8s-gateway *",
        "default/mesh-0-mesh-autogenerated-k8s-gateway backend.default.svc.cluster.local",
        "default/pass-0-mesh-autogenerated-k8s-gateway *.example.com,y.example.org",
        // a.example.com merges rpc, web and late: named after the oldest (rpc and web tie on age, rpc sorts first).
        "default/rpc-0-mesh-autogenerated-k8s-gateway a.example.com",
        "default/web-0-mesh-autogenerated-k8s-gateway b.example.com",
        "default/web-1-mesh-autogenerated-k8s-gateway secure.example.com",
        // The second Gateway's b.example.com.
        "default/web-2-mesh-autogenerated-k8s-gateway b.example.com",
      ],
    )
    expect(schemaProblems(out)).toEqual([])
  })
})
