/** The Multus networks annotation with the mesh CNI network (`default/mesh-cni`) added exactly once. */
import { describe, expect, it } from "vitest"
import { withMeshNetwork } from "../../../src/services/injection/templates/capture.js"

describe("withMeshNetwork", () => {
  it("starts a list when the pod has none, naming the network with its namespace", () => {
    expect(withMeshNetwork(undefined)).toBe("default/mesh-cni")
    expect(withMeshNetwork("  ")).toBe("default/mesh-cni")
  })
  it("appends to a comma-separated list once", () => {
    expect(withMeshNetwork("a,b")).toBe("a,b, default/mesh-cni")
    expect(withMeshNetwork("a, default/mesh-cni")).toBe("a, default/mesh-cni")
    // The same name in another namespace is another network.
    expect(withMeshNetwork("other/mesh-cni")).toBe("other/mesh-cni, default/mesh-cni")
  })
  it("splices an object with its namespace into a JSON list once, keeping the text as written", () => {
    expect(withMeshNetwork('[{"name":"a"}]')).toBe('[{"name":"a"}, {"name": "mesh-cni", "namespace": "default"}]')
    expect(JSON.parse(withMeshNetwork("[]"))).toEqual([{ name: "mesh-cni", namespace: "default" }])
    const present = '[{"name":"mesh-cni","namespace":"default"}]'
    expect(withMeshNetwork(present)).toBe(present)
    // Without a namespace it is a network of the pod's own namespace: ours is still added.
    expect(JSON.parse(withMeshNetwork('[{"name":"mesh-cni"}]'))).toEqual([
      { name: "mesh-cni" },
      { name: "mesh-cni", namespace: "default" },
    ])
  })
  it("leaves a bracketed value that is not a list of networks alone", () => {
    expect(withMeshNetwork("[not json]")).toBe("[not json]")
    expect(withMeshNetwork('{"name":"a","x":[]}')).toBe('{"name":"a","x":[]}')
  })
})
