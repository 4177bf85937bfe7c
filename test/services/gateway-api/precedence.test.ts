/**
 * Issue 36 group 5: the order of generated routes on one host. Exact paths first, then path
 * prefixes (longest first, a trailing slash not counted), then regular expressions, then matches
 * without a path; within a path, a method match first, then more header matches, then more query
 * matches; then the oldest route. GRPCRoute: service+method (exact) before service (prefix)
 * before regular expressions.
 */
import { describe, expect, it } from "@effect/vitest"
import type { HTTPRouteMatch } from "../../../src/services/config-model/schemas/gateway-api/types.js"
import { convert, grpcRoute, httpRoute, parentGw, schemaProblems, simpleGateway, vsForHost } from "./fixtures.js"

const toBackend = { backendRefs: [{ name: "backend", port: 8080 }] }

/** One rule per match, each tagged by a request header the test reads back. */
const ruleTagged = (tag: string, match: HTTPRouteMatch) => ({
  matches: [match],
  filters: [
    { type: "RequestHeaderModifier" as const, requestHeaderModifier: { set: [{ name: "x-tag", value: tag }] } },
  ],
  ...toBackend,
})

const order = (routes: Parameters<typeof convert>[0]["httpRoutes"]) => {
  const out = convert({ gateways: [simpleGateway()], ...(routes !== undefined ? { httpRoutes: routes } : {}) })
  expect(schemaProblems(out)).toEqual([])
  return (vsForHost(out, "p.example.com").spec.http ?? []).map((h) => h.headers?.request?.set?.["x-tag"])
}

const route = (name: string, rules: ReadonlyArray<ReturnType<typeof ruleTagged>>, created = "2024-01-01T00:00:00Z") =>
  httpRoute(name, { parentRefs: [parentGw], hostnames: ["p.example.com"], rules: [...rules] }, { created })

describe("HTTP route precedence", () => {
  it("exact, then prefixes (longest first), then regular expressions, a prefix of / before any regex", () => {
    const tags = order([
      route("r", [
        ruleTagged("regex-long", { path: { type: "RegularExpression", value: "/api/v[0-9]+/items" } }),
        ruleTagged("root", { path: { type: "PathPrefix", value: "/" } }),
        ruleTagged("prefix-api", { path: { type: "PathPrefix", value: "/api" } }),
        ruleTagged("exact", { path: { type: "Exact", value: "/api/items" } }),
        ruleTagged("regex-short", { path: { type: "RegularExpression", value: "/a.*" } }),
      ]),
    ])
    // A prefix becomes two entries (exact /api and prefix /api/) that share the tag.
    expect([...new Set(tags)]).toEqual(["exact", "prefix-api", "root", "regex-long", "regex-short"])
  })

  it("a prefix's trailing slash does not count toward its length", () => {
    const tags = order([
      route("r", [
        ruleTagged("slash", { path: { type: "PathPrefix", value: "/a/b/" } }),
        ruleTagged("longer", { path: { type: "PathPrefix", value: "/a/bc" } }),
      ]),
    ])
    expect([...new Set(tags)]).toEqual(["longer", "slash"])
  })

  it("equal prefixes (with or without the slash): method, then header count, then query count, then the oldest route", () => {
    const tags = order([
      route(
        "newer",
        [
          ruleTagged("one-header", {
            path: { type: "PathPrefix", value: "/api/" },
            headers: [{ name: "a", value: "1" }],
          }),
          ruleTagged("method", { path: { type: "PathPrefix", value: "/api" }, method: "POST" }),
        ],
        "2024-03-01T00:00:00Z",
      ),
      route(
        "older",
        [
          ruleTagged("query", {
            path: { type: "PathPrefix", value: "/api" },
            queryParams: [{ name: "q", value: "1" }],
          }),
          ruleTagged("two-headers", {
            path: { type: "PathPrefix", value: "/api" },
            headers: [
              { name: "a", value: "1" },
              { name: "b", value: "2" },
            ],
          }),
          ruleTagged("plain-older", { path: { type: "PathPrefix", value: "/api/" } }),
        ],
        "2024-02-01T00:00:00Z",
      ),
      route(
        "newest",
        [ruleTagged("plain-newest", { path: { type: "PathPrefix", value: "/api" } })],
        "2024-04-01T00:00:00Z",
      ),
    ])
    expect([...new Set(tags)]).toEqual(["method", "two-headers", "one-header", "query", "plain-older", "plain-newest"])
  })
})

describe("GRPCRoute precedence", () => {
  it("service+method (exact) before service (prefix) before regular expressions, before header-only matches", () => {
    const out = convert({
      gateways: [simpleGateway()],
      grpcRoutes: [
        grpcRoute("g", {
          parentRefs: [parentGw],
          hostnames: ["g.example.com"],
          rules: [
            { matches: [{ headers: [{ name: "x-any", value: "1" }] }], ...toBackend },
            {
              matches: [{ method: { type: "RegularExpression", service: "pkg\\.v[0-9]+\\.Store", method: "Get.*" } }],
              ...toBackend,
            },
            { matches: [{ method: { service: "pkg.Store" } }], ...toBackend },
            { matches: [{ method: { type: "RegularExpression", service: "pkg\\.Store" } }], ...toBackend },
            { matches: [{ method: { service: "pkg.Store", method: "Get" } }], ...toBackend },
          ],
        }),
      ],
    })
    expect(schemaProblems(out)).toEqual([])
    const uris = vsForHost(out, "g.example.com").spec.http!.map((h) => h.match?.[0]?.uri ?? "headers-only")
    expect(uris).toEqual([
      { exact: "/pkg.Store/Get" },
      { prefix: "/pkg.Store/" },
      { regex: "/pkg\\.v[0-9]+\\.Store/Get.*" },
      // A service-only regular expression takes any method (`.+`).
      { regex: "/pkg\\.Store/.+" },
      "headers-only",
    ])
  })
})
