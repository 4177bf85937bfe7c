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

describe("destinationrule.CaCertificateAnalyzer", () => {
  const NAME = "destinationrule.CaCertificateAnalyzer"

  it("reports SIMPLE or MUTUAL TLS without a CA, named namespace/name", () => {
    const found = analyze(NAME, dr("{tls: {mode: SIMPLE}}"))
    expect(summary(found)).toEqual(["MSH0128 DestinationRule/default/db"])
    expect(found[0]?.text).toBe(
      "DestinationRule default/db in namespace default has TLS mode set to SIMPLE but no caCertificates are set to validate server identity for host: db.example.com",
    )
    expect(analyze(NAME, dr("{tls: {mode: SIMPLE, caCertificates: /etc/ca.pem}}"))).toEqual([])
    expect(analyze(NAME, dr("{tls: {mode: DISABLE}}"))).toEqual([])
  })

  it("reports port-level TLS without a CA, the port as its selector prints", () => {
    const policy = (tls: string) => dr(`{portLevelSettings: [{port: {number: 443}, tls: ${tls}}]}`)
    const found = analyze(NAME, policy("{mode: MUTUAL, clientCertificate: /c, privateKey: /k}"))
    expect(summary(found)).toEqual(["MSH0129 DestinationRule/default/db"])
    expect(found[0]?.text).toMatch(/for host: db\.example\.com at port number:443$/)
    expect(analyze(NAME, policy("{mode: SIMPLE, caCertificates: /ca}"))).toEqual([])
  })

  it("a credentialName counts only with a workloadSelector; insecureSkipVerify does not silence it", () => {
    expect(analyze(NAME, dr("{tls: {mode: SIMPLE, credentialName: db-ca}}"))).toHaveLength(1)
    const selected = mesh(
      "DestinationRule",
      "db",
      "{host: db.example.com, workloadSelector: {matchLabels: {app: client}}, trafficPolicy: {tls: {mode: SIMPLE, credentialName: db-ca}}}",
    )
    expect(analyze(NAME, selected)).toEqual([])
    expect(analyze(NAME, dr("{tls: {mode: SIMPLE, insecureSkipVerify: true}}"))).toHaveLength(1)
  })

  it("does not look into subsets' traffic policies", () => {
    const subsetOnly = mesh(
      "DestinationRule",
      "db",
      "{host: db.example.com, subsets: [{name: v1, labels: {v: '1'}, trafficPolicy: {tls: {mode: SIMPLE}}}]}",
    )
    expect(analyze(NAME, subsetOnly)).toEqual([])
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
