/** DestinationRule TLS and EnvoyFilter operation analyzers: one positive and one negative case each. */
import { describe, expect, it } from "@effect/vitest"
import { analyze, mesh, summary } from "./support.js"

const dr = (policy: string) => mesh("DestinationRule", "db", `{host: db.example.com, trafficPolicy: ${policy}}`)
const filter = (applyTo: string, operation: string, extra = "", match = "") =>
  mesh(
    "EnvoyFilter",
    "f",
    `{${extra}configPatches: [{applyTo: ${applyTo}, ${match}patch: {operation: ${operation}${operation === "REMOVE" ? "" : ", value: {name: x}"}}}]}`,
  )

describe("destination rule analyzers", () => {
  it("CaCertificateAnalyzer reports SIMPLE TLS without a CA", () => {
    expect(summary(analyze("destinationrule.CaCertificateAnalyzer", dr("{tls: {mode: SIMPLE}}")))).toEqual([
      "MSH0128 DestinationRule/default/db",
    ])
    expect(
      analyze("destinationrule.CaCertificateAnalyzer", dr("{tls: {mode: SIMPLE, caCertificates: /etc/ca.pem}}")),
    ).toEqual([])
  })

  it("PortLevelCaCertificateAnalyzer reports port-level TLS without a CA", () => {
    const policy = (tls: string) => dr(`{portLevelSettings: [{port: {number: 443}, tls: ${tls}}]}`)
    expect(summary(analyze("destinationrule.PortLevelCaCertificateAnalyzer", policy("{mode: SIMPLE}")))).toEqual([
      "MSH0129 DestinationRule/default/db",
    ])
    expect(
      analyze("destinationrule.PortLevelCaCertificateAnalyzer", policy("{mode: SIMPLE, credentialName: db-ca}")),
    ).toEqual([])
  })
})

describe("envoyfilter.EnvoyPatchAnalyzer", () => {
  const NAME = "envoyfilter.EnvoyPatchAnalyzer"
  const codes = (...docs: ReadonlyArray<string>) => analyze(NAME, ...docs).map((m) => m.type.code)

  it("reports relative operations without a priority, REMOVE and REPLACE included where they apply", () => {
    expect(summary(analyze(NAME, filter("HTTP_FILTER", "INSERT_BEFORE")))).toEqual(["MSH0151 EnvoyFilter/default/f"])
    expect(analyze(NAME, filter("HTTP_FILTER", "INSERT_BEFORE"))[0]?.path).toEqual([
      "spec",
      "configPatches",
      0,
      "patch",
      "value",
    ])
    expect(codes(filter("HTTP_FILTER", "REMOVE"))).toEqual(["MSH0151"])
    expect(codes(filter("HTTP_FILTER", "REPLACE"))).toEqual(["MSH0151"])
    expect(codes(filter("HTTP_FILTER", "INSERT_BEFORE", "priority: 10, "))).toEqual([])
    expect(codes(filter("HTTP_FILTER", "INSERT_FIRST"))).toEqual([])
    expect(codes(filter("HTTP_FILTER", "MERGE"))).toEqual([])
  })

  it("reports MSH0155 only when an earlier patch with a proxy version touched the same filter instance", () => {
    const match = "match: {proxy: {proxyVersion: '^1\\.2.*'}}, "
    // The patch's own proxy version is not yet known when it is checked.
    expect(codes(filter("HTTP_FILTER", "INSERT_AFTER", "", match))).toEqual(["MSH0151"])
    const twoPatches = mesh(
      "EnvoyFilter",
      "f",
      `{configPatches: [{applyTo: HTTP_FILTER, ${match}patch: {operation: INSERT_FIRST, value: {name: x}}}, {applyTo: HTTP_FILTER, patch: {operation: INSERT_AFTER, value: {name: x}}}, {applyTo: HTTP_FILTER, patch: {operation: INSERT_AFTER, value: {name: y}}}]}`,
    )
    expect(codes(twoPatches)).toEqual(["MSH0155", "MSH0151"])
  })

  it("reports REPLACE outside filters and virtual hosts", () => {
    const found = analyze(NAME, filter("CLUSTER", "REPLACE"))
    expect(summary(found)).toEqual(["MSH0152 EnvoyFilter/default/f"])
    expect(found[0]?.text).toBe("The REPLACE operation is only valid for HTTP_FILTER and NETWORK_FILTER.")
    expect(codes(filter("NETWORK_FILTER", "REPLACE", "priority: 1, "))).toEqual([])
  })

  it("reports ADD and REMOVE on a route configuration or route", () => {
    expect(codes(filter("ROUTE_CONFIGURATION", "ADD"))).toEqual(["MSH0153"])
    expect(codes(filter("CLUSTER", "ADD"))).toEqual([])
    expect(codes(filter("HTTP_ROUTE", "REMOVE"))).toEqual(["MSH0154"])
    expect(analyze(NAME, filter("HTTP_ROUTE", "REMOVE"))[0]?.text).toBe(
      "The REMOVE operation will be ignored when applyTo is set to ROUTE_CONFIGURATION, or HTTP_ROUTE.",
    )
  })
})
