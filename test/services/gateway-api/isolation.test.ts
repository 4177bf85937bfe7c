/**
 * Issue 36 group 6: listener isolation. Four HTTP listeners on one port (no hostname,
 * `*.example.com`, `*.foo.example.com`, `abc.foo.example.com`); a route attached to each names
 * all those hosts. Each route serves only the names no more specific listener owns, so a request
 * reaches the route of the most specific listener that matches it.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Listener } from "../../../src/services/config-model/schemas/gateway-api/types.js"
import { allowedByIsolation } from "../../../src/services/gateway-api/isolation.js"
import {
  convert,
  GW_REF,
  httpRoute,
  parentConditions,
  parentGw,
  routeStatusOf,
  schemaProblems,
  simpleGateway,
  virtualServicesFor,
} from "./fixtures.js"

const listener = (name: string, hostname?: string, port = 80, protocol: Listener["protocol"] = "HTTP"): Listener => ({
  name,
  port,
  protocol,
  ...(hostname !== undefined ? { hostname } : {}),
  allowedRoutes: { namespaces: { from: "All" } },
})

const HOSTS = ["bar.com", "*.example.com", "*.foo.example.com", "abc.foo.example.com"]

const routeOn = (section: string) =>
  httpRoute(`on-${section}`, {
    parentRefs: [{ ...parentGw, sectionName: section }],
    hostnames: HOSTS,
    rules: [{ backendRefs: [{ name: "backend", port: 8080 }] }],
  })

/** Host → the routes serving it, from the generated VirtualServices. */
const servedBy = (out: ReturnType<typeof convert>) =>
  Object.fromEntries(
    virtualServicesFor(out, GW_REF).map((vs) => [
      vs.spec.hosts?.[0],
      (vs.spec.http ?? []).map((h) => h.name?.split(".")[1]).filter((n, i, all) => all.indexOf(n) === i),
    ]),
  )

describe("listener isolation", () => {
  const sections = ["empty", "wild", "wild-foo", "abc"]
  const gateway = simpleGateway([
    listener("empty"),
    listener("wild", "*.example.com"),
    listener("wild-foo", "*.foo.example.com"),
    listener("abc", "abc.foo.example.com"),
  ])

  it("each host is served only by the route of the most specific listener owning it", () => {
    const out = convert({ gateways: [gateway], httpRoutes: sections.map(routeOn) })
    expect(schemaProblems(out)).toEqual([])
    expect(servedBy(out)).toEqual({
      "bar.com": ["on-empty"],
      "*.example.com": ["on-wild"],
      "*.foo.example.com": ["on-wild-foo"],
      "abc.foo.example.com": ["on-abc"],
    })
    // Isolation narrows what a route serves; it stays attached and accepted.
    for (const s of sections)
      expect(parentConditions(routeStatusOf(out, "HTTPRoute", `on-${s}`))[0]).toBe("Accepted=True/Accepted")
  })

  it("listeners on another port or of another protocol do not isolate", () => {
    const out = convert({
      gateways: [
        simpleGateway([
          listener("empty"),
          listener("wild-8080", "*.example.com", 8080),
          listener("wild-https", "*.example.com", 443, "HTTPS"),
        ]),
      ],
      httpRoutes: [routeOn("empty")],
    })
    expect(servedBy(out)["*.example.com"]).toEqual(["on-empty"])
  })

  it("the rule on its own: wildcard and empty listeners yield to at-least-as-long hostnames; exact ones never", () => {
    const others = ["", "*.example.com", "abc.foo.example.com"]
    expect(allowedByIsolation("x.example.com", "", others)).toBe(false)
    expect(allowedByIsolation("bar.com", "", others)).toBe(true)
    // A shorter other listener does not take names from a longer wildcard.
    expect(allowedByIsolation("*.foo.example.com", "*.foo.example.com", others)).toBe(true)
    expect(allowedByIsolation("abc.foo.example.com", "*.foo.example.com", others)).toBe(false)
    expect(allowedByIsolation("abc.foo.example.com", "abc.foo.example.com", ["*.foo.example.com"])).toBe(true)
    // Names are compared without regard to case.
    expect(allowedByIsolation("ABC.foo.example.com", "*.FOO.example.com", ["abc.foo.example.com"])).toBe(false)
  })
})
