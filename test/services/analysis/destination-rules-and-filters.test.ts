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

describe("envoy filter analyzers", () => {
  it("RelativeOperationAnalyzer reports relative operations without a priority", () => {
    expect(summary(analyze("envoyfilter.RelativeOperationAnalyzer", filter("HTTP_FILTER", "INSERT_BEFORE")))).toEqual([
      "MSH0151 EnvoyFilter/default/f",
    ])
    expect(
      analyze("envoyfilter.RelativeOperationAnalyzer", filter("HTTP_FILTER", "INSERT_BEFORE", "priority: 10, ")),
    ).toEqual([])
  })

  it("RelativeOperationWithProxyVersionAnalyzer reports them when a proxy version is matched", () => {
    const match = "match: {proxy: {proxyVersion: '^1\\.2.*'}}, "
    expect(
      summary(
        analyze(
          "envoyfilter.RelativeOperationWithProxyVersionAnalyzer",
          filter("HTTP_FILTER", "INSERT_AFTER", "", match),
        ),
      ),
    ).toEqual(["MSH0155 EnvoyFilter/default/f"])
    expect(
      analyze(
        "envoyfilter.RelativeOperationWithProxyVersionAnalyzer",
        filter("HTTP_FILTER", "INSERT_FIRST", "", match),
      ),
    ).toEqual([])
  })

  it("ReplaceOperationAnalyzer reports REPLACE outside filters", () => {
    expect(summary(analyze("envoyfilter.ReplaceOperationAnalyzer", filter("CLUSTER", "REPLACE")))).toEqual([
      "MSH0152 EnvoyFilter/default/f",
    ])
    expect(analyze("envoyfilter.ReplaceOperationAnalyzer", filter("NETWORK_FILTER", "REPLACE"))).toEqual([])
  })

  it("AddOperationAnalyzer reports ADD on a route configuration", () => {
    expect(summary(analyze("envoyfilter.AddOperationAnalyzer", filter("ROUTE_CONFIGURATION", "ADD")))).toEqual([
      "MSH0153 EnvoyFilter/default/f",
    ])
    expect(analyze("envoyfilter.AddOperationAnalyzer", filter("CLUSTER", "ADD"))).toEqual([])
  })

  it("RemoveOperationAnalyzer reports REMOVE on a route", () => {
    expect(summary(analyze("envoyfilter.RemoveOperationAnalyzer", filter("HTTP_ROUTE", "REMOVE")))).toEqual([
      "MSH0154 EnvoyFilter/default/f",
    ])
    expect(analyze("envoyfilter.RemoveOperationAnalyzer", filter("HTTP_FILTER", "REMOVE"))).toEqual([])
  })
})
