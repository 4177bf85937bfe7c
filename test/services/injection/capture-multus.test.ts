/** The Multus networks annotation with the mesh CNI network added exactly once. */
import { describe, expect, it } from "vitest"
import { withMeshNetwork } from "../../../src/services/injection/templates/capture.js"

describe("withMeshNetwork", () => {
  it("starts a list when the pod has none", () => {
    expect(withMeshNetwork(undefined)).toBe("mesh-cni")
    expect(withMeshNetwork("  ")).toBe("mesh-cni")
  })
  it("appends to a comma-separated list once", () => {
    expect(withMeshNetwork("a,b")).toBe("a,b, mesh-cni")
    expect(withMeshNetwork("a, mesh-cni")).toBe("a, mesh-cni")
  })
  it("appends an object to a JSON list once", () => {
    expect(JSON.parse(withMeshNetwork('[{"name":"a"}]'))).toEqual([{ name: "a" }, { name: "mesh-cni" }])
    expect(withMeshNetwork('[{"name":"mesh-cni"}]')).toBe('[{"name":"mesh-cni"}]')
    expect(JSON.parse(withMeshNetwork("[]"))).toEqual([{ name: "mesh-cni" }])
  })
  it("leaves a value that is not a list of networks alone", () => {
    expect(withMeshNetwork("[not json")).toBe("[not json")
  })
})
