/** deprecation.DeprecationAnalyzer (MSH0002): deprecated fields and removed kinds. */
import { describe, expect, it } from "@effect/vitest"
import { defaultMeshConfig } from "../../../src/services/mesh-config/mesh-config.js"
import { analyze, analyzeWith, mesh, summary } from "./support.js"

const NAME = "deprecation.DeprecationAnalyzer"
const crd = (group: string, kind: string) =>
  `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: ${kind.toLowerCase()}s.${group}}\nspec: {group: ${group}, names: {kind: ${kind}}}\n`

describe("deprecation.DeprecationAnalyzer", () => {
  it("reports fault.delay.percent, a Sidecar egressProxy and removed RBAC CRDs", () => {
    const found = analyze(
      NAME,
      mesh(
        "VirtualService",
        "vs",
        "{hosts: [a], http: [{fault: {delay: {percent: 50, fixedDelay: 1s}}, route: [{destination: {host: a}}]}]}",
      ),
      mesh(
        "Sidecar",
        "sc",
        "{outboundTrafficPolicy: {mode: ALLOW_ANY, egressProxy: {host: egress.example.com, port: {number: 80}}}}",
      ),
      crd("rbac.mesh.io", "ServiceRole"),
    )
    expect(summary(found)).toEqual([
      "MSH0002 VirtualService/default/vs",
      "MSH0002 Sidecar/default/sc",
      "MSH0002 CustomResourceDefinition//serviceroles.rbac.mesh.io",
    ])
    expect(found.map((m) => m.text)).toEqual([
      "Deprecated: HTTPRoute.fault.delay.percent is deprecated; use HTTPRoute.fault.delay.percentage",
      "Deprecated: OutboundTrafficPolicy.EgressProxy ignored",
      "Deprecated: Custom resource type rbac.mesh.io ServiceRole is removed",
    ])
  })

  it("accepts percentage, a Sidecar without egressProxy and other CRDs", () => {
    expect(
      analyze(
        NAME,
        mesh(
          "VirtualService",
          "vs",
          "{hosts: [a], http: [{fault: {delay: {percentage: {value: 50}, fixedDelay: 1s}}, route: [{destination: {host: a}}]}]}",
        ),
        mesh("Sidecar", "sc", "{outboundTrafficPolicy: {mode: ALLOW_ANY}}"),
        crd("networking.mesh.io", "VirtualService"),
      ),
    ).toEqual([])
  })
})

describe("telemetry.LightstepAnalyzer", () => {
  const telemetry = (provider: string) =>
    mesh("Telemetry", "t", `{tracing: [{providers: [{name: ${provider}}]}]}`, "default", "telemetry.mesh.io/v1")
  const withProviders = {
    meshConfig: {
      ...defaultMeshConfig(),
      extensionProviders: [
        { name: "ls", lightstep: { service: "ls.example.com", port: 8080, accessToken: "t" } },
        { name: "otel", opentelemetry: { service: "otel.example.com", port: 4317 } },
      ],
    },
  }

  it("reports tracing through a Lightstep provider, not through others", () => {
    const found = analyzeWith("telemetry.LightstepAnalyzer", withProviders, telemetry("ls"))
    expect(summary(found)).toEqual(["MSH0002 Telemetry/default/t"])
    expect(found[0]?.text).toBe(
      "Deprecated: The Lightstep provider ls is deprecated, please migrate to OpenTelemetry provider.",
    )
    expect(analyzeWith("telemetry.LightstepAnalyzer", withProviders, telemetry("otel"))).toEqual([])
    expect(analyzeWith("telemetry.LightstepAnalyzer", {}, telemetry("ls"))).toEqual([])
  })
})
