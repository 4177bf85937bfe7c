/**
 * Issue 36 group 2: a ServiceEntry as a route's parent (GAMMA for external services): the route
 * becomes mesh routing for each host of the ServiceEntry, as for a Service parent; a
 * ServiceEntry that does not exist is NoMatchingParent with the reference's message.
 */
import { describe, expect, it } from "vitest"
import {
  convert,
  httpRoute,
  parentConditions,
  routeStatusOf,
  schemaProblems,
  service,
  tcpRoute,
  virtualServicesFor,
} from "./fixtures.js"

const entryService = (host: string) =>
  service("ext", "default", [["http", 80, "HTTP"]], { hostname: host, source: "ServiceEntry/default/ext" })
const services = [service("backend"), entryService("api.example.org"), entryService("www.example.org")]
const seParent = (name: string, extra: Record<string, unknown> = {}) => ({
  group: "networking.istio.io",
  kind: "ServiceEntry",
  name,
  ...extra,
})
const toBackend = [{ backendRefs: [{ name: "backend", port: 8080 }] }]

describe("ServiceEntry parents", () => {
  it("an HTTPRoute on a ServiceEntry: a mesh VirtualService per host of the entry", () => {
    const out = convert({ services, httpRoutes: [httpRoute("r", { parentRefs: [seParent("ext")], rules: toBackend })] })
    expect(schemaProblems(out)).toEqual([])
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "r"))).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=True/ResolvedRefs",
    ])
    expect(virtualServicesFor(out, "mesh").map((vs) => [vs.spec.hosts, vs.spec.http?.[0]?.route])).toEqual([
      [["api.example.org"], [{ destination: { host: "backend.default.svc.cluster.local", port: { number: 8080 } } }]],
      [["www.example.org"], [{ destination: { host: "backend.default.svc.cluster.local", port: { number: 8080 } } }]],
    ])
  })

  it("a port on the parentRef narrows the routes; a TCPRoute takes tcp routes", () => {
    const out = convert({
      services,
      tcpRoutes: [tcpRoute("t", { parentRefs: [seParent("ext", { port: 443 })], rules: toBackend })],
    })
    expect(virtualServicesFor(out, "mesh").map((vs) => vs.spec.tcp?.[0]?.match)).toEqual([
      [{ port: 443 }],
      [{ port: 443 }],
    ])
  })

  it("a ServiceEntry that does not exist: NoMatchingParent, nothing generated", () => {
    const out = convert({
      services,
      httpRoutes: [httpRoute("r", { parentRefs: [seParent("ghost")], rules: toBackend })],
    })
    const status = routeStatusOf(out, "HTTPRoute", "r")
    expect(parentConditions(status)[0]).toBe("Accepted=False/NoMatchingParent")
    expect(status.parents[0]!.conditions[0]!.message).toBe('parent service entry: "ghost" not found')
    expect(out.virtualServices).toEqual([])
  })
})
