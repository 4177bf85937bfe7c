/** k8sgateway.CRDVersionAnalyzer (MSH0176): Gateway-API CRDs below the bundle version the mesh needs. */
import { describe, expect, it } from "@effect/vitest"
import { parseVersion } from "../../../src/services/analysis/analyzers/gateway-api-crds.js"
import { analyze, summary } from "./support.js"

const NAME = "k8sgateway.CRDVersionAnalyzer"
const crd = (name: string, version?: string) =>
  `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: ${name}${version === undefined ? "" : `, annotations: {gateway.networking.k8s.io/bundle-version: '${version}'}`}}\nspec: {group: gateway.networking.k8s.io}\n`

describe("k8sgateway.CRDVersionAnalyzer", () => {
  it("reports a CRD below its minimum version (pre-release ignored in the comparison)", () => {
    const found = analyze(
      NAME,
      crd("tcproutes.gateway.networking.k8s.io", "v1.5.1"),
      crd("tlsroutes.gateway.networking.k8s.io", "v1.5.0-rc.1"),
    )
    expect(summary(found)).toEqual(["MSH0176 CustomResourceDefinition//tcproutes.gateway.networking.k8s.io"])
    expect(found[0]?.text).toBe(
      'Gateway API CRD "tcproutes.gateway.networking.k8s.io" is at version "1.5.1" but the mesh requires at least "1.6.0"; resources of this kind will not be processed. Upgrade the Gateway API CRDs to satisfy the minimum version.',
    )
  })

  it("ignores CRDs at or above the minimum, without the annotation, unparseable, or without a minimum", () => {
    expect(
      analyze(
        NAME,
        crd("grpcroutes.gateway.networking.k8s.io", "v1.1.0"),
        crd("backendtlspolicies.gateway.networking.k8s.io"),
        crd("tcproutes.gateway.networking.k8s.io", "latest"),
        crd("httproutes.gateway.networking.k8s.io", "v0.1.0"),
      ),
    ).toEqual([])
  })

  it("normalises versions as semantic versions", () => {
    expect(parseVersion("v1.2")).toEqual({ parts: [1, 2, 0], normal: "1.2.0" })
    expect(parseVersion("1.4.0-rc.1+build")).toEqual({ parts: [1, 4, 0], normal: "1.4.0-rc.1" })
    expect(parseVersion("one")).toBeUndefined()
  })
})
