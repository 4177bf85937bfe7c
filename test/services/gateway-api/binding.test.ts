/**
 * Route binding to Gateway listeners: sectionName, port, hostname intersection, allowedRoutes
 * (namespaces Same / All / Selector, kinds), missing parents and other controllers' Gateways.
 */
import { describe, expect, it } from "@effect/vitest"
import type { AllowedRoutes } from "../../../src/services/config-model/schemas/gateway-api/types.js"
import { intersectHostnames, withoutCovered } from "../../../src/services/gateway-api/hostnames.js"
import {
  convert,
  GW_REF,
  gateway,
  gatewayClass,
  gatewayStatusOf,
  httpListener,
  httpRoute,
  listenerOf,
  parentConditions,
  parentGw,
  routeStatusOf,
  simpleGateway,
  statusOf,
  tcpRoute,
  virtualServicesFor,
} from "./fixtures.js"

const toBackend = [{ backendRefs: [{ name: "backend", port: 8080 }] }]

const twoListeners = simpleGateway([
  httpListener("http", { hostname: "*.example.com" }),
  httpListener("admin", { port: 8080, hostname: "admin.example.com" }),
])

describe("hostname intersection", () => {
  it("the more specific name of each meeting pair; the route's names when the listener has none", () => {
    expect(intersectHostnames("*.example.com", ["foo.example.com", "a.b.example.com", "example.com", "x.org"])).toEqual(
      ["foo.example.com", "a.b.example.com"],
    )
    expect(intersectHostnames("foo.example.com", ["*.example.com"])).toEqual(["foo.example.com"])
    expect(intersectHostnames("*.example.com", ["*.a.example.com", "*.com"])).toEqual([
      "*.a.example.com",
      "*.example.com",
    ])
    expect(intersectHostnames(undefined, ["Foo.Example.com"])).toEqual(["foo.example.com"])
    expect(intersectHostnames(undefined, [])).toEqual(["*"])
    expect(intersectHostnames("a.example.com", [])).toEqual(["a.example.com"])
    expect(withoutCovered(["*.example.com", "a.example.com", "b.org"])).toEqual(["*.example.com", "b.org"])
  })

  it("a route's VirtualService hosts are the names it shares with the listener; none shared → NoMatchingListenerHostname", () => {
    const out = convert({
      gateways: [simpleGateway([httpListener("http", { hostname: "*.example.com" })])],
      httpRoutes: [
        httpRoute("r", { parentRefs: [parentGw], hostnames: ["foo.example.com", "other.org"], rules: toBackend }),
        httpRoute("miss", { parentRefs: [parentGw], hostnames: ["other.org"], rules: toBackend }),
        httpRoute("none", { parentRefs: [parentGw], rules: toBackend }),
      ],
    })
    expect(
      virtualServicesFor(out, GW_REF)
        .flatMap((vs) => vs.spec.hosts)
        .sort(),
    ).toEqual(["*.example.com", "foo.example.com"])
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "miss"))[0]).toBe(
      "Accepted=False/NoMatchingListenerHostname",
    )
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "r"))[0]).toBe("Accepted=True/Accepted")
  })
})

describe("sectionName and port", () => {
  it("sectionName attaches to that listener only; an unknown one is NoMatchingParent", () => {
    const out = convert({
      gateways: [twoListeners],
      httpRoutes: [
        httpRoute("admin", { parentRefs: [{ ...parentGw, sectionName: "admin" }], rules: toBackend }),
        httpRoute("typo", { parentRefs: [{ ...parentGw, sectionName: "nope" }], rules: toBackend }),
      ],
    })
    const status = gatewayStatusOf(out)
    expect(listenerOf(status, "admin").attachedRoutes).toBe(1)
    expect(listenerOf(status, "http").attachedRoutes).toBe(0)
    expect(virtualServicesFor(out, GW_REF).map((vs) => vs.spec.hosts)).toEqual([["admin.example.com"]])
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "typo"))[0]).toBe("Accepted=False/NoMatchingParent")
  })

  it("port attaches to the listeners on that port", () => {
    const out = convert({
      gateways: [twoListeners],
      httpRoutes: [
        httpRoute("p", { parentRefs: [{ ...parentGw, port: 80 }], rules: toBackend }),
        httpRoute("no-port", { parentRefs: [{ ...parentGw, port: 9999 }], rules: toBackend }),
      ],
    })
    const status = gatewayStatusOf(out)
    expect(listenerOf(status, "http").attachedRoutes).toBe(1)
    expect(listenerOf(status, "admin").attachedRoutes).toBe(0)
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "no-port"))[0]).toBe("Accepted=False/NoMatchingParent")
  })

  it("a route bound to only one of the ports serving its host has its matches narrowed to that port", () => {
    const out = convert({
      gateways: [simpleGateway([httpListener("http"), httpListener("alt", { port: 8080 })])],
      httpRoutes: [
        httpRoute("alt-only", {
          parentRefs: [{ ...parentGw, sectionName: "alt" }],
          hostnames: ["a.example.com"],
          rules: [
            { matches: [{ path: { type: "Exact", value: "/x" } }], backendRefs: [{ name: "backend", port: 8080 }] },
          ],
        }),
        httpRoute("everywhere", {
          parentRefs: [parentGw],
          hostnames: ["a.example.com"],
          rules: [
            { matches: [{ path: { type: "Exact", value: "/y" } }], backendRefs: [{ name: "backend", port: 8080 }] },
          ],
        }),
      ],
    })
    const [vs] = virtualServicesFor(out, GW_REF)
    expect(vs!.spec.http!.map((h) => h.match)).toEqual([
      [{ uri: { exact: "/x" }, port: 8080 }],
      [{ uri: { exact: "/y" } }],
    ])
  })
})

describe("allowedRoutes", () => {
  const listenerFrom = (namespaces: NonNullable<AllowedRoutes["namespaces"]>) =>
    simpleGateway([{ name: "http", port: 80, protocol: "HTTP", allowedRoutes: { namespaces } }])
  const routeIn = (namespace: string) =>
    httpRoute(`r-${namespace}`, { parentRefs: [parentGw], rules: toBackend }, { namespace })

  it("Same (the default) takes routes from the Gateway's namespace only", () => {
    const out = convert({ gateways: [listenerFrom({})], httpRoutes: [routeIn("infra"), routeIn("default")] })
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "r-infra", "infra"))[0]).toBe("Accepted=True/Accepted")
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "r-default"))[0]).toBe(
      "Accepted=False/NotAllowedByListeners",
    )
    expect(out.gateways[0]!.spec.servers[0]!.hosts).toEqual(["infra/*"])
    expect(virtualServicesFor(out, GW_REF).map((vs) => vs.meta.namespace)).toEqual(["infra"])
  })

  it("All takes routes from every namespace", () => {
    const out = convert({
      gateways: [listenerFrom({ from: "All" })],
      httpRoutes: [routeIn("infra"), routeIn("default")],
    })
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "r-default"))[0]).toBe("Accepted=True/Accepted")
  })

  it("Selector takes routes from namespaces whose labels match (expressions and the name label included)", () => {
    const selector: NonNullable<AllowedRoutes["namespaces"]> = {
      from: "Selector",
      selector: {
        matchLabels: { team: "web" },
        matchExpressions: [{ key: "env", operator: "NotIn", values: ["prod"] }],
      },
    }
    const namespaceLabels = new Map([
      ["web", { team: "web" }],
      ["web-prod", { team: "web", env: "prod" }],
      ["db", { team: "db" }],
    ])
    const out = convert({
      gateways: [listenerFrom(selector)],
      httpRoutes: [routeIn("web"), routeIn("web-prod"), routeIn("db")],
      namespaceLabels,
    })
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "r-web", "web"))[0]).toBe("Accepted=True/Accepted")
    for (const ns of ["web-prod", "db"])
      expect(parentConditions(routeStatusOf(out, "HTTPRoute", `r-${ns}`, ns))[0]).toBe(
        "Accepted=False/NotAllowedByListeners",
      )
    const byName = convert({
      gateways: [
        listenerFrom({ from: "Selector", selector: { matchLabels: { "kubernetes.io/metadata.name": "db" } } }),
      ],
      httpRoutes: [routeIn("db")],
    })
    expect(parentConditions(routeStatusOf(byName, "HTTPRoute", "r-db", "db"))[0]).toBe("Accepted=True/Accepted")
  })

  it("kinds: a TCPRoute cannot attach to an HTTP listener, nor an HTTPRoute to a listener allowing GRPCRoute only", () => {
    const out = convert({
      gateways: [
        simpleGateway([
          httpListener("http"),
          httpListener("grpc-only", {
            port: 8080,
            allowedRoutes: { namespaces: { from: "All" }, kinds: [{ kind: "GRPCRoute" }] },
          }),
        ]),
      ],
      tcpRoutes: [
        tcpRoute("t", { parentRefs: [parentGw], rules: [{ backendRefs: [{ name: "backend", port: 8080 }] }] }),
      ],
      httpRoutes: [httpRoute("h", { parentRefs: [{ ...parentGw, sectionName: "grpc-only" }], rules: toBackend })],
    })
    expect(parentConditions(routeStatusOf(out, "TCPRoute", "t"))[0]).toBe("Accepted=False/NotAllowedByListeners")
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "h"))[0]).toBe("Accepted=False/NotAllowedByListeners")
    expect(out.virtualServices).toEqual([])
  })
})

describe("parents of other controllers", () => {
  it("a missing Gateway is NoMatchingParent; another controller's Gateway is left out of the status", () => {
    const out = convert({
      gatewayClasses: [gatewayClass("theirs", "example.com/other")],
      gateways: [
        simpleGateway(),
        gateway("foreign", { gatewayClassName: "theirs", listeners: [httpListener()] }, { namespace: "infra" }),
      ],
      httpRoutes: [
        httpRoute("mixed", {
          parentRefs: [parentGw, { name: "foreign", namespace: "infra" }, { name: "ghost", namespace: "infra" }],
          rules: toBackend,
        }),
        httpRoute("only-foreign", { parentRefs: [{ name: "foreign", namespace: "infra" }], rules: toBackend }),
      ],
    })
    const status = routeStatusOf(out, "HTTPRoute", "mixed")
    expect(status.parents.map((p) => p.parentRef.name)).toEqual(["gw", "ghost"])
    expect(parentConditions(status, 1)[0]).toBe("Accepted=False/NoMatchingParent")
    expect(statusOf(out, "HTTPRoute", "only-foreign")).toBeUndefined()
    expect(out.virtualServices.every((vs) => vs.spec.gateways?.[0] === GW_REF)).toBe(true)
  })
})
