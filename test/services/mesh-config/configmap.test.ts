import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import {
  type ConfigMapSlot,
  configMapInputs,
  configMapSource,
  meshConfigMapName,
  type Resolved,
  resolveMeshInputs,
  resolveNetworkInputs,
} from "../../../src/services/mesh-config/configmap.js"

const slot = (name: string, data?: Record<string, string>, exists = true): ConfigMapSlot => ({
  namespace: "mesh-system",
  name,
  configMap: exists
    ? { metadata: { name, namespace: "mesh-system" }, ...(data !== undefined ? { data } : {}) }
    : undefined,
})

const value = <A>(r: Resolved<A>): A => {
  if (r === "keep" || Either.isLeft(r)) throw new Error(`expected a value, got ${JSON.stringify(r)}`)
  return r.right.value
}

describe("mesh ConfigMaps", () => {
  it("names the ConfigMap after the revision", () => {
    expect(meshConfigMapName()).toBe("mesh")
    expect(meshConfigMapName("")).toBe("mesh")
    expect(meshConfigMapName("default")).toBe("mesh")
    expect(meshConfigMapName("canary")).toBe("mesh-canary")
  })

  it("reads a key as a source named after the ConfigMap; a missing ConfigMap or key is no source", () => {
    expect(configMapSource(slot("mesh", { mesh: "trustDomain: a.org\n" }), "mesh")).toEqual({
      file: "configmap mesh-system/mesh key mesh",
      text: "trustDomain: a.org\n",
    })
    expect(configMapSource(slot("mesh", { other: "x" }), "mesh")).toBeUndefined()
    expect(configMapSource(slot("mesh"), "mesh")).toBeUndefined()
    expect(configMapSource(slot("mesh", undefined, false), "mesh")).toBeUndefined()
    expect(configMapSource(undefined, "mesh")).toBeUndefined()
  })

  it("resolves defaults when nothing is given", () => {
    const inputs = configMapInputs(slot("mesh", undefined, false), undefined)
    expect(value(resolveMeshInputs(inputs)).trustDomain).toBe("cluster.local")
    expect(value(resolveNetworkInputs(inputs))).toEqual({ networks: {} })
  })

  it("applies the shared config under the standard one", () => {
    const inputs = configMapInputs(
      slot("mesh", { mesh: "trustDomain: standard.org\n" }),
      slot("shared", { mesh: "trustDomain: shared.org\ningressClass: shared\n" }),
    )
    const config = value(resolveMeshInputs(inputs))
    expect(config.trustDomain).toBe("standard.org")
    expect(config.ingressClass).toBe("shared")
  })

  it("reports field issues with the ConfigMap key as the file, for either source", () => {
    const inputs = configMapInputs(
      slot("mesh", { mesh: "proxyListenPort: notaport\n" }),
      slot("shared", { mesh: "enableAutoMtls: [\n" }),
    )
    const resolved = resolveMeshInputs(inputs)
    if (resolved === "keep" || Either.isRight(resolved)) throw new Error("expected issues")
    expect(resolved.left.map((i) => `${i.file} ${i.path}`)).toEqual([
      "configmap mesh-system/shared key mesh ",
      "configmap mesh-system/mesh key mesh proxyListenPort",
    ])
  })

  it("takes the standard networks, else the shared ones; invalid networks are issues", () => {
    const n1 = "networks:\n  n1:\n    endpoints: [{fromCidr: 10.0.0.0/8}]\n"
    const n2 = "networks:\n  n2:\n    endpoints: [{fromRegistry: remote}]\n"
    const both = configMapInputs(slot("mesh", { meshNetworks: n1 }), slot("shared", { meshNetworks: n2 }))
    expect(Object.keys(value(resolveNetworkInputs(both)).networks ?? {})).toEqual(["n1"])
    const sharedOnly = configMapInputs(slot("mesh", {}), slot("shared", { meshNetworks: n2 }))
    expect(Object.keys(value(resolveNetworkInputs(sharedOnly)).networks ?? {})).toEqual(["n2"])
    const bad = configMapInputs(slot("mesh", { meshNetworks: "networks:\n  n1:\n    endpoints: [{}]\n" }), undefined)
    const resolved = resolveNetworkInputs(bad)
    if (resolved === "keep" || Either.isRight(resolved)) throw new Error("expected issues")
    expect(resolved.left[0]?.file).toBe("configmap mesh-system/mesh key meshNetworks")
  })

  it("keeps the last result while an input cannot be read", () => {
    const inputs = { sharedMesh: "keep", standardMesh: undefined, sharedNetworks: undefined, standardNetworks: "keep" }
    expect(resolveMeshInputs(inputs as never)).toBe("keep")
    expect(resolveNetworkInputs(inputs as never)).toBe("keep")
  })
})
