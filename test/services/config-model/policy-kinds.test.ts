/**
 * Rules of the security, telemetry and extensions kinds taken from the reference's current
 * CRDs (fields, enums, CEL rules), each with its message at its field path.
 */
import { describe, expect, it } from "vitest"
import { doc, parse, problems } from "./helpers.js"

describe("AuthorizationPolicy", () => {
  it("refuses serviceAccounts beside namespaces or principals, in either form", () => {
    const spec = {
      rules: [{ from: [{ source: { notServiceAccounts: ["demo/web"], principals: ["a"], notNamespaces: ["b"] } }] }],
    }
    expect(problems(doc("AuthorizationPolicy", spec))).toEqual([
      "spec.rules[0].from[0].source: Cannot set serviceAccounts with namespaces or principals (found principals, notNamespaces)",
    ])
  })

  it("bounds service accounts: at most 16, each at most 320 characters", () => {
    const many = Array.from({ length: 17 }, (_, i) => `ns/sa${i}`)
    const spec = { rules: [{ from: [{ source: { serviceAccounts: many, notServiceAccounts: ["x".repeat(321)] } }] }] }
    expect(problems(doc("AuthorizationPolicy", spec))).toEqual([
      "spec.rules[0].from[0].source.serviceAccounts: must have at most 16 items, found 17",
      "spec.rules[0].from[0].source.notServiceAccounts[0]: must be at most 320 characters long",
    ])
  })

  it("reads trustDomains and notTrustDomains, refusing empty entries", () => {
    const ok = { rules: [{ from: [{ source: { trustDomains: ["td.example"], notTrustDomains: ["old.example"] } }] }] }
    const policy = parse(doc("AuthorizationPolicy", ok)).resources[0]?.spec as {
      rules: ReadonlyArray<{ from: ReadonlyArray<{ source: { trustDomains: ReadonlyArray<string> } }> }>
    }
    expect(policy.rules[0]?.from[0]?.source.trustDomains).toEqual(["td.example"])
    expect(problems(doc("AuthorizationPolicy", { rules: [{ from: [{ source: { trustDomains: [""] } }] }] }))).toEqual([
      "spec.rules[0].from[0].source.trustDomains[0]: empty value not allowed, found in trustDomains",
    ])
  })

  it("counts an explicit empty targetRefs as set beside a selector", () => {
    expect(problems(doc("AuthorizationPolicy", { selector: { matchLabels: { app: "a" } }, targetRefs: [] }))).toEqual([
      "spec: only one of targetRefs or workloadSelector can be set",
    ])
  })
})

describe("RequestAuthentication", () => {
  it("folds the legacy jwks_uri into jwksUri", () => {
    const result = parse(
      doc("RequestAuthentication", { jwtRules: [{ issuer: "i", jwks_uri: "https://k.example/jwks" }] }),
    )
    expect(result.issues).toEqual([])
    expect(result.resources[0]?.spec).toEqual({ jwtRules: [{ issuer: "i", jwksUri: "https://k.example/jwks" }] })
  })

  it("refuses empty space-delimited claims and more than 64 of them", () => {
    const claims = [...Array.from({ length: 64 }, (_, i) => `c${i}`), ""]
    expect(
      problems(doc("RequestAuthentication", { jwtRules: [{ issuer: "i", spaceDelimitedClaims: claims }] })),
    ).toEqual([
      "spec.jwtRules[0].spaceDelimitedClaims[64]: claim name must be non-empty string",
      "spec.jwtRules[0].spaceDelimitedClaims: must have at most 64 items, found 65",
    ])
  })

  it("refuses an empty jwksUri and two key sources", () => {
    expect(
      problems(doc("RequestAuthentication", { jwtRules: [{ issuer: "i", jwksUri: "", jwks_uri: "https://a/k" }] })),
    ).toEqual([
      "spec.jwtRules[0].jwksUri: jwksUri must not be empty",
      "spec.jwtRules[0]: only one of jwks or jwksUri can be set, found jwksUri and jwks_uri",
    ])
  })
})

describe("Telemetry", () => {
  it("accepts a custom tag with no source and a formatter tag; refuses two sources", () => {
    const ok = { tracing: [{ customTags: { none: {}, route: { formatter: { value: "%ROUTE_NAME%" } } } }] }
    expect(problems(doc("Telemetry", ok))).toEqual([])
    const two = { tracing: [{ customTags: { t: { literal: { value: "a" }, formatter: { value: "b" } } } }] }
    expect(problems(doc("Telemetry", two))).toEqual([
      "spec.tracing[0].customTags.t: only one of literal, environment, header or formatter may be set, found literal and formatter",
    ])
  })

  it("refuses any value, even empty, beside REMOVE", () => {
    const spec = { metrics: [{ overrides: [{ tagOverrides: { t: { operation: "REMOVE", value: "" } } }] }] }
    expect(problems(doc("Telemetry", spec))).toEqual([
      "spec.metrics[0].overrides[0].tagOverrides.t.value: tagOverrides.value may only be set when operation is UPSERT",
    ])
  })
})

describe("WasmPlugin", () => {
  it("refuses an empty imagePullSecret or pluginName and any value beside HOST", () => {
    const spec = {
      url: "oci://a/b",
      imagePullSecret: "",
      pluginName: "",
      vmConfig: { env: [{ name: "A", valueFrom: "HOST", value: "" }] },
    }
    expect(problems(doc("WasmPlugin", spec))).toEqual([
      "spec.imagePullSecret: imagePullSecret field must not be empty",
      "spec.pluginName: pluginName field must not be empty",
      "spec.vmConfig.env[0].value: value may only be set when valueFrom is INLINE",
    ])
  })

  it("refuses a port twice in one match and more than 16 targetRefs", () => {
    const targetRefs = Array.from({ length: 17 }, (_, i) => ({ kind: "Service", name: `s${i}` }))
    const spec = { url: "oci://a/b", targetRefs, match: [{ ports: [{ number: 80 }, { number: 80 }] }] }
    expect(problems(doc("WasmPlugin", spec))).toEqual([
      "spec.targetRefs: at most 16 targetRefs may be set, found 17",
      "spec.match[0].ports[1].number: duplicate port 80",
    ])
  })

  it("accepts verificationKey and FAIL_RELOAD", () => {
    expect(
      problems(doc("WasmPlugin", { url: "oci://a/b", verificationKey: "k", failStrategy: "FAIL_RELOAD" })),
    ).toEqual([])
  })
})
