/** deprecation.DeprecationAnalyzer (MSH0002): deprecated fields and removed kinds. */
import { describe, expect, it } from "@effect/vitest"
import { analyze, mesh, summary } from "./support.js"

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
