/**
 * Issue 36 group 2: a ServiceEntry as a route's backend, as the reference resolves it — a
 * `Hostname` backendRef (mesh group) naming one of the entry's hosts, looked up as a service
 * visible to the route's namespace; a host no ServiceEntry exports there is BackendNotFound.
 */
import { describe, expect, it } from "vitest"
import { parentConditions, routeStatusOf, schemaProblems, service, vsForHost } from "./fixtures.js"
import { entryHosts, GATEWAY_YAML, run } from "./policy-fixtures.js"

const route = (name: string, parent: string, host: string) => `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}, namespace: default}
spec:
  parentRefs: [${parent}]
  rules: [{backendRefs: [{group: networking.istio.io, kind: Hostname, name: ${host}, port: 80}]}]
---`

describe("ServiceEntry hosts as backends", () => {
  const egress = entryHosts(
    "egress",
    ["google.com", "*.egress.com"],
    [
      ["http", 80],
      ["tls", 443],
    ],
  )

  it("a Gateway route to a ServiceEntry host: the destination is the host; the route is Accepted and resolved", () => {
    const out = run(GATEWAY_YAML + route("http", "{name: gw, namespace: infra}", "google.com"), [
      service("backend"),
      ...egress,
    ])
    expect(schemaProblems(out)).toEqual([])
    expect(parentConditions(routeStatusOf(out, "HTTPRoute", "http"))).toEqual([
      "Accepted=True/Accepted",
      "ResolvedRefs=True/ResolvedRefs",
    ])
    expect(vsForHost(out, "*").spec.http?.[0]?.route).toEqual([
      { destination: { host: "google.com", port: { number: 80 } } },
    ])
  })

  it("a mesh route on the ServiceEntry itself to its host: routing for every host of the entry", () => {
    const out = run(route("egress", "{group: networking.istio.io, kind: ServiceEntry, name: egress}", "google.com"), [
      service("backend"),
      ...egress,
    ])
    expect(out.virtualServices.map((vs) => [vs.spec.hosts, vs.spec.http?.[0]?.route?.[0]?.destination.host])).toEqual([
      [["*.egress.com"], "google.com"],
      [["google.com"], "google.com"],
    ])
  })

  it("a host exported only to another namespace, or unknown: BackendNotFound", () => {
    const hidden = entryHosts("hidden", ["hidden.example.com"], [["http", 80]], "private").map((s) => ({
      ...s,
      exportTo: ["."],
    }))
    const out = run(
      GATEWAY_YAML +
        route("hidden", "{name: gw, namespace: infra}", "hidden.example.com") +
        route("unknown", "{name: gw, namespace: infra}", "nowhere.example.com"),
      [service("backend"), ...hidden],
    )
    for (const name of ["hidden", "unknown"])
      expect(parentConditions(routeStatusOf(out, "HTTPRoute", name))[1]).toBe("ResolvedRefs=False/BackendNotFound")
  })
})
