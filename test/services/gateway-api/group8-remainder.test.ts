/**
 * Issue 36 group 8, the rest: our own cases (input, expected routes, expected status) for
 * hostname backendRefs that name no service (BackendNotFound), zero-weight TCP/TLS backends
 * (connections refused through a destination no cluster serves), a TLSRoute on a terminating TLS
 * listener, mesh (GAMMA) consumer routes (no ReferenceGrant needed to reach backends) and Service
 * parents with a port (the port is the only match of a rule without matches), and a Gateway
 * with no listener.
 */
import { describe, expect, it } from "vitest"
import {
  convert,
  GW_REF,
  gateway,
  gatewayStatusOf,
  httpRoute,
  parentConditions,
  parentGw,
  routeStatusOf,
  schemaProblems,
  service,
  simpleGateway,
  tcpRoute,
  tlsRoute,
  virtualServicesFor,
} from "./fixtures.js"

const MESH_GROUP = "networking.mesh.io"
const EXTERNAL = service("ext", "default", [["http", 80, "HTTP"]], {
  hostname: "api.example.org",
  source: "ServiceEntry/default/ext",
})
const PRIVATE = service("private", "elsewhere", [["http", 80, "HTTP"]], {
  hostname: "private.example.org",
  source: "ServiceEntry/elsewhere/private",
  exportTo: ["."],
})

describe("Hostname backendRefs", () => {
  const route = (name: string, extra: Record<string, unknown> = {}) =>
    httpRoute("r", {
      parentRefs: [parentGw],
      rules: [{ backendRefs: [{ group: MESH_GROUP, kind: "Hostname", name, port: 80, ...extra }] }],
    })
  const run = (name: string, extra: Record<string, unknown> = {}) =>
    convert({ gateways: [simpleGateway()], httpRoutes: [route(name, extra)], services: [EXTERNAL, PRIVATE] })

  it("a host the registry has: routed to it", () => {
    const out = run("api.example.org")
    expect(virtualServicesFor(out, GW_REF)[0]!.spec.http![0]!.route).toEqual([
      { destination: { host: "api.example.org", port: { number: 80 } } },
    ])
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "r"))).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=True/ResolvedRefs",
    ])
  })

  it("a host no service has, or one not exported to the route's namespace: BackendNotFound, answered 500", () => {
    for (const host of ["nowhere.example.org", "private.example.org"]) {
      const out = run(host)
      expect(parentConditions(routeStatusOf(out, "HTTPRoute", "r"))).toEqual([
        "Accepted=True/Accepted",
        "ResolvedRefs=False/BackendNotFound",
      ])
      const status = routeStatusOf(out, "HTTPRoute", "r").parents[0]!.conditions[1]!
      expect(status.message).toBe(`backend(${host}) not found`)
      expect(virtualServicesFor(out, GW_REF)[0]!.spec.http![0]!.directResponse).toEqual({ status: 500 })
    }
  })

  it("a namespace on a Hostname backend: InvalidDestination", () => {
    const out = run("api.example.org", { namespace: "default" })
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "r"))[1]).toBe("ResolvedRefs=False/InvalidDestination")
  })
})

describe("zero-weight TCP and TLS backends", () => {
  const gw = simpleGateway([
    { name: "tcp", port: 9000, protocol: "TCP", allowedRoutes: { namespaces: { from: "All" } } },
    {
      name: "tls",
      port: 8443,
      protocol: "TLS",
      tls: { mode: "Passthrough" },
      allowedRoutes: { namespaces: { from: "All" } },
    },
  ])
  const blackhole = [
    { destination: { host: "internal.cluster.local", subset: "zero-weight", port: { number: 65535 } } },
  ]

  it("only zero weights: the connections go to a destination no cluster serves (refused), nothing reported", () => {
    const out = convert({
      gateways: [gw],
      tcpRoutes: [
        tcpRoute("t", { parentRefs: [parentGw], rules: [{ backendRefs: [{ name: "ghost", port: 1, weight: 0 }] }] }),
      ],
      tlsRoutes: [
        tlsRoute("s", {
          parentRefs: [parentGw],
          hostnames: ["db.example.com"],
          rules: [{ backendRefs: [{ name: "backend", port: 443, weight: 0 }] }],
        }),
      ],
    })
    expect(schemaProblems(out)).toEqual([])
    const [tls, tcp] = virtualServicesFor(out, GW_REF)
    expect(tcp!.spec.tcp).toEqual([{ route: blackhole }])
    expect(tls!.spec.tls).toEqual([{ match: [{ sniHosts: ["db.example.com"] }], route: blackhole }])
    // A zero-weight backend is not looked at: the missing one is not reported.
    expect(parentConditions(routeStatusOf(out, "TCPRoute", "t"))).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=True/ResolvedRefs",
    ])
  })

  it("a zero-weight backend beside weighted ones is left out", () => {
    const out = convert({
      gateways: [gw],
      tcpRoutes: [
        tcpRoute("t", {
          parentRefs: [parentGw],
          rules: [
            {
              backendRefs: [
                { name: "backend", port: 1, weight: 0 },
                { name: "backend", port: 2, weight: 5 },
              ],
            },
          ],
        }),
      ],
    })
    expect(virtualServicesFor(out, GW_REF)[0]!.spec.tcp).toEqual([
      { route: [{ destination: { host: "backend.default.svc.cluster.local", port: { number: 2 } } }] },
    ])
  })
})

describe("TLSRoute on a terminating TLS listener", () => {
  it("binds, and becomes tls routes by SNI of the listener's hostname on the terminating server", () => {
    const out = convert({
      gateways: [
        simpleGateway([
          {
            name: "tls-terminate",
            port: 443,
            protocol: "TLS",
            hostname: "example.com",
            tls: { mode: "Terminate", certificateRefs: [{ name: "cert" }] },
            allowedRoutes: { namespaces: { from: "All" } },
          },
          {
            name: "wild",
            port: 9443,
            protocol: "TLS",
            hostname: "*.wild.example.com",
            tls: { mode: "Terminate", certificateRefs: [{ name: "cert" }] },
            allowedRoutes: { namespaces: { from: "All" } },
          },
        ]),
      ],
      tlsRoutes: [
        tlsRoute("term", {
          parentRefs: [{ ...parentGw, sectionName: "tls-terminate" }],
          hostnames: ["example.com"],
          rules: [{ backendRefs: [{ name: "backend", port: 8080 }] }],
        }),
        tlsRoute("wrong", {
          parentRefs: [{ ...parentGw, sectionName: "tls-terminate" }],
          hostnames: ["other.example.com"],
          rules: [{ backendRefs: [{ name: "backend", port: 8080 }] }],
        }),
        tlsRoute("wide", {
          parentRefs: [{ ...parentGw, sectionName: "wild" }],
          hostnames: ["foo.wild.example.com", "bar.wild.example.com"],
          rules: [{ backendRefs: [{ name: "backend", port: 8080 }] }],
        }),
      ],
    })
    expect(schemaProblems(out)).toEqual([])
    expect(out.gateways[0]!.spec.servers.map((s) => [s.port.number, s.tls?.mode])).toEqual([
      [443, "SIMPLE"],
      [9443, "SIMPLE"],
    ])
    const bySource = new Map(
      virtualServicesFor(out, GW_REF).map((vs) => [vs.meta.annotations["internal.mesh.io/parents"], vs.spec]),
    )
    expect(bySource.get("TLSRoute/default/term")).toEqual({
      hosts: ["example.com"],
      gateways: [GW_REF],
      // One mesh Gateway holds both listeners: the sectionName's port narrows the match.
      tls: [
        {
          match: [{ sniHosts: ["example.com"], port: 443 }],
          route: [{ destination: { host: "backend.default.svc.cluster.local", port: { number: 8080 } } }],
        },
      ],
    })
    expect(bySource.get("TLSRoute/default/wide")?.tls?.[0]?.match).toEqual([
      { sniHosts: ["bar.wild.example.com", "foo.wild.example.com"], port: 9443 },
    ])
    expect(bySource.has("TLSRoute/default/wrong")).toBe(false)
    expect(parentConditions(routeStatusOf(out, "TLSRoute", "term"))[0]).toBe("Accepted=True/Accepted")
    expect(parentConditions(routeStatusOf(out, "TLSRoute", "wrong"))[0]).toBe(
      "Accepted=False/NoMatchingListenerHostname",
    )
  })
})

describe("mesh (GAMMA) routes", () => {
  const services = [
    service("echo", "default", [["http", 80, "HTTP"]]),
    service("echo-1", "default", [
      ["http", 80, "HTTP"],
      ["alt", 8080, "HTTP"],
    ]),
    service("httpbin", "apple", [["http", 80, "HTTP"]]),
  ]
  const svc = (name: string, extra: Record<string, unknown> = {}) => ({ group: "", kind: "Service", name, ...extra })

  it("a consumer route reaches a backend in the Service's namespace without a ReferenceGrant", () => {
    const out = convert({
      services,
      httpRoutes: [
        httpRoute("consumer", {
          parentRefs: [svc("httpbin", { namespace: "apple", port: 80 })],
          rules: [{ backendRefs: [{ name: "httpbin", namespace: "apple", port: 80 }] }],
        }),
      ],
    })
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "consumer"))).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=True/ResolvedRefs",
    ])
    const [vs] = virtualServicesFor(out, "mesh")
    expect([vs!.meta.namespace, vs!.spec]).toEqual([
      "default",
      {
        hosts: ["httpbin.apple.svc.cluster.local"],
        gateways: ["mesh"],
        exportTo: ["."],
        http: [
          {
            name: "default.consumer.0",
            match: [{ port: 80 }],
            route: [{ destination: { host: "httpbin.apple.svc.cluster.local", port: { number: 80 } } }],
          },
        ],
      },
    ])
  })

  it("the same route on a Gateway still needs the ReferenceGrant there (each parent its own status)", () => {
    const out = convert({
      services,
      gateways: [simpleGateway()],
      httpRoutes: [
        httpRoute("dual", {
          parentRefs: [svc("httpbin", { namespace: "apple" }), parentGw],
          hostnames: ["a.example.com"],
          rules: [{ backendRefs: [{ name: "httpbin", namespace: "apple", port: 80 }] }],
        }),
      ],
    })
    const status = routeStatusOf(out, "HTTPRoute", "dual")
    expect(parentConditions(status, 0)[1]).toBe("ResolvedRefs=True/ResolvedRefs")
    expect(parentConditions(status, 1)[1]).toBe("ResolvedRefs=False/RefNotPermitted")
    expect(virtualServicesFor(out, "mesh")[0]!.spec.http![0]!.route).toHaveLength(1)
    expect(virtualServicesFor(out, GW_REF)[0]!.spec.http![0]!.directResponse).toEqual({ status: 500 })
  })

  it("Service parents with ports: each port the only match of a rule without matches; a path match keeps its path", () => {
    const out = convert({
      services,
      httpRoutes: [
        httpRoute("multi", {
          parentRefs: [svc("echo-1", { port: 80 }), svc("echo-1", { port: 8080 })],
          rules: [
            { matches: [{ path: { type: "Exact", value: "/x" } }], backendRefs: [{ name: "echo", port: 80 }] },
            { backendRefs: [{ name: "echo", port: 80 }] },
          ],
        }),
      ],
    })
    expect(schemaProblems(out)).toEqual([])
    expect(virtualServicesFor(out, "mesh")[0]!.spec.http!.map((h) => h.match)).toEqual([
      [
        { uri: { exact: "/x" }, port: 80 },
        { uri: { exact: "/x" }, port: 8080 },
      ],
      [{ port: 80 }, { port: 8080 }],
    ])
  })
})

describe("a Gateway with no listener", () => {
  it("is accepted, serves nothing, and routes to it are not attached", () => {
    const out = convert({
      gateways: [gateway("gw", { listeners: [], addresses: [{ value: "10.0.0.1" }] }, { namespace: "infra" })],
      httpRoutes: [
        httpRoute("r", { parentRefs: [parentGw], rules: [{ backendRefs: [{ name: "backend", port: 80 }] }] }),
      ],
    })
    const status = gatewayStatusOf(out)
    expect(status.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`)).toEqual([
      "Accepted=True/Accepted",
      "Programmed=True/Programmed",
    ])
    expect(status.listeners).toEqual([])
    expect(out.gateways).toEqual([])
    expect(out.virtualServices).toEqual([])
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "r"))[0]).toBe("Accepted=False/NoMatchingParent")
  })
})
