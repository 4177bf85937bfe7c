import { describe, expect, it } from "vitest"
import {
  authorizationPolicy,
  collection,
  gateway,
  meshObjects,
  node,
  pod,
  slice,
  virtualService,
  workloadAt,
} from "../../scripts/bench-versus-workload.js"

describe("bench:versus workload", () => {
  it("is the issue's size at scale 1 and shrinks with the scale, never to nothing", () => {
    expect(workloadAt(1)).toEqual({ services: 1000, routed: 200, authorizationPolicies: 50, gateways: 20 })
    expect(workloadAt(0.1)).toEqual({ services: 100, routed: 20, authorizationPolicies: 5, gateways: 2 })
    expect(workloadAt(0.001)).toEqual({ services: 1, routed: 1, authorizationPolicies: 1, gateways: 1 })
  })

  it("writes each kind to its API collection, the mesh resources once per group family", () => {
    expect(collection(pod(3, 1))).toBe("/api/v1/namespaces/bench/pods")
    expect(collection(node(0))).toBe("/api/v1/nodes")
    expect(collection(slice(0))).toBe("/apis/discovery.k8s.io/v1/namespaces/bench/endpointslices")
    expect(collection(authorizationPolicy("reference", 0, 10))).toBe(
      "/apis/security.istio.io/v1/namespaces/bench/authorizationpolicies",
    )
    expect(collection(authorizationPolicy("mesh", 0, 10))).toBe(
      "/apis/security.mesh.io/v1/namespaces/bench/authorizationpolicies",
    )
    expect(collection(gateway("mesh", 0))).toBe("/apis/networking.mesh.io/v1/namespaces/bench/gateways")
    expect(collection(virtualService("reference", 0))).toBe(
      "/apis/networking.istio.io/v1/namespaces/bench/virtualservices",
    )
    const w = workloadAt(0.1)
    const mesh = meshObjects("mesh", w)
    const reference = meshObjects("reference", w)
    expect(mesh).toHaveLength(2 * w.routed + w.authorizationPolicies + w.gateways)
    // Same names and specs; only the group differs.
    expect(reference.map((o) => [o.kind, o.metadata.name, o.spec])).toEqual(
      mesh.map((o) => [o.kind, o.metadata.name, o.spec]),
    )
  })

  it("marks exactly the named pods' endpoints not ready", () => {
    const endpoints = slice(2, new Set([0, 3])).endpoints as Array<{ conditions: { ready: boolean } }>
    expect(endpoints.map((e) => e.conditions.ready)).toEqual([
      false,
      true,
      true,
      false,
      true,
      true,
      true,
      true,
      true,
      true,
    ])
    expect(virtualService("mesh", 1, 80).spec.http[0].route.map((r: { weight: number }) => r.weight)).toEqual([80, 20])
  })
})
