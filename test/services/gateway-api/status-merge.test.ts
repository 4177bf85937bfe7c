/**
 * Merging the conversion's statuses into what objects carry: unchanged condition statuses keep
 * their time, a status equal but for times needs no write, other controllers' route parents
 * survive, ours for parents no longer referenced go, a Gateway's listeners and addresses are
 * replaced; and the merge patch that clears removed fields.
 */
import { describe, expect, it } from "vitest"
import { mergedStatus, statusMergePatch } from "../../../src/services/gateway-api/status-merge.js"

const OURS = "mesh.io/gateway-controller"
const OTHER = "example.com/other-controller"
const T0 = "2024-01-01T00:00:00Z"
const T1 = "2024-05-01T12:00:00Z"

const cond = (type: string, status: "True" | "False", time: string, reason = type, generation = 1) => ({
  type,
  status,
  reason,
  message: `${type} ${status}`,
  observedGeneration: generation,
  lastTransitionTime: time,
})

const parent = (controllerName: string, name: string, conditions: ReadonlyArray<unknown>, sectionName?: string) => ({
  parentRef: { name, ...(sectionName !== undefined ? { sectionName } : {}) },
  controllerName,
  conditions,
})

describe("mergedStatus: conditions", () => {
  it("keeps the time of a condition whose status is unchanged and takes the new time otherwise", () => {
    const current = { conditions: [cond("Accepted", "True", T0), cond("Programmed", "True", T0)] }
    const desired = {
      conditions: [cond("Accepted", "True", T1), cond("Programmed", "False", T1, "AddressNotAssigned")],
    }
    const next = mergedStatus("GatewayClass", desired, current, OURS)
    expect(next?.conditions).toEqual([
      cond("Accepted", "True", T0),
      cond("Programmed", "False", T1, "AddressNotAssigned"),
    ])
  })

  it("needs no write when only the times differ", () => {
    const current = { conditions: [cond("Accepted", "True", T0)] }
    expect(mergedStatus("GatewayClass", { conditions: [cond("Accepted", "True", T1)] }, current, OURS)).toBeUndefined()
  })

  it("writes a changed reason or generation but keeps the time while the status holds", () => {
    const current = { conditions: [cond("Accepted", "True", T0)] }
    const next = mergedStatus(
      "GatewayClass",
      { conditions: [cond("Accepted", "True", T1, "Accepted", 2)] },
      current,
      OURS,
    )
    expect(next?.conditions).toEqual([cond("Accepted", "True", T0, "Accepted", 2)])
  })

  it("writes the first status of an object that carries none, with the new time", () => {
    const desired = { conditions: [cond("Accepted", "True", T1)] }
    expect(mergedStatus("GatewayClass", desired, undefined, OURS)).toEqual(desired)
  })

  it("keeps GatewayClass fields it does not write", () => {
    const current = { conditions: [cond("Accepted", "False", T0)], supportedFeatures: ["HTTPRoute"] }
    const next = mergedStatus("GatewayClass", { conditions: [cond("Accepted", "True", T1)] }, current, OURS)
    expect(next).toEqual({ conditions: [cond("Accepted", "True", T1)], supportedFeatures: ["HTTPRoute"] })
  })
})

describe("mergedStatus: route parents", () => {
  const foreign = parent(OTHER, "gw", [cond("Accepted", "True", T0)])

  it("keeps other controllers' entries and replaces ours, matched by parentRef", () => {
    const current = {
      parents: [foreign, parent(OURS, "gw", [cond("Accepted", "True", T0), cond("ResolvedRefs", "True", T0)])],
    }
    const desired = {
      parents: [
        parent(OURS, "gw", [cond("Accepted", "True", T1), cond("ResolvedRefs", "False", T1, "BackendNotFound")]),
      ],
    }
    expect(mergedStatus("HTTPRoute", desired, current, OURS)).toEqual({
      parents: [
        foreign,
        parent(OURS, "gw", [cond("Accepted", "True", T0), cond("ResolvedRefs", "False", T1, "BackendNotFound")]),
      ],
    })
  })

  it("drops our entries for parents no longer referenced and adds new ones", () => {
    const current = { parents: [parent(OURS, "old", [cond("Accepted", "True", T0)]), foreign] }
    const desired = { parents: [parent(OURS, "gw", [cond("Accepted", "True", T1)], "http")] }
    expect(mergedStatus("GRPCRoute", desired, current, OURS)).toEqual({
      parents: [foreign, parent(OURS, "gw", [cond("Accepted", "True", T1)], "http")],
    })
  })

  it("tells parents apart by sectionName, and fills the group and kind defaults", () => {
    const current = {
      parents: [
        {
          parentRef: { group: "gateway.networking.k8s.io", kind: "Gateway", name: "gw", sectionName: "a" },
          controllerName: OURS,
          conditions: [cond("Accepted", "True", T0)],
        },
      ],
    }
    const same = { parents: [parent(OURS, "gw", [cond("Accepted", "True", T1)], "a")] }
    expect(mergedStatus("HTTPRoute", same, current, OURS)?.parents).toEqual([
      parent(OURS, "gw", [cond("Accepted", "True", T0)], "a"),
    ])
    const other = { parents: [parent(OURS, "gw", [cond("Accepted", "True", T1)], "b")] }
    expect(mergedStatus("HTTPRoute", other, current, OURS)?.parents).toEqual(other.parents)
  })

  it("needs no write when our entries are the same but for times", () => {
    const current = { parents: [foreign, parent(OURS, "gw", [cond("Accepted", "True", T0)])] }
    const desired = { parents: [parent(OURS, "gw", [cond("Accepted", "True", T1)])] }
    expect(mergedStatus("TCPRoute", desired, current, OURS)).toBeUndefined()
  })

  it("clears our entries when the route answers to none of our parents, and writes nothing for a route we never answered", () => {
    const current = { parents: [parent(OURS, "gw", [cond("Accepted", "True", T0)]), foreign] }
    expect(mergedStatus("HTTPRoute", { parents: [] }, current, OURS)).toEqual({ parents: [foreign] })
    expect(mergedStatus("HTTPRoute", { parents: [] }, { parents: [foreign] }, OURS)).toBeUndefined()
    expect(mergedStatus("HTTPRoute", { parents: [] }, undefined, OURS)).toBeUndefined()
  })
})

describe("mergedStatus: Gateways", () => {
  const listener = (name: string, attachedRoutes: number, time: string, accepted: "True" | "False" = "True") => ({
    name,
    supportedKinds: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute" }],
    attachedRoutes,
    conditions: [cond("Accepted", accepted, time)],
  })

  it("replaces listeners (keeping per-listener condition times) and addresses", () => {
    const current = {
      addresses: [{ type: "IPAddress", value: "10.0.0.1" }],
      conditions: [cond("Accepted", "True", T0)],
      listeners: [listener("http", 0, T0), listener("gone", 1, T0)],
    }
    const desired = {
      addresses: [{ type: "IPAddress", value: "10.0.0.2" }],
      conditions: [cond("Accepted", "True", T1)],
      listeners: [listener("http", 2, T1), listener("https", 0, T1, "False")],
    }
    expect(mergedStatus("KubernetesGateway", desired, current, OURS)).toEqual({
      addresses: [{ type: "IPAddress", value: "10.0.0.2" }],
      conditions: [cond("Accepted", "True", T0)],
      listeners: [listener("http", 2, T0), listener("https", 0, T1, "False")],
    })
  })

  it("removes addresses no longer wanted, and the patch clears them", () => {
    const current = {
      addresses: [{ type: "IPAddress", value: "10.0.0.1" }],
      conditions: [cond("Accepted", "True", T0)],
      listeners: [listener("http", 1, T0)],
    }
    const desired = { conditions: [cond("Accepted", "True", T1)], listeners: [listener("http", 1, T1)] }
    const next = mergedStatus("KubernetesGateway", desired, current, OURS)
    expect(next).toEqual({ conditions: [cond("Accepted", "True", T0)], listeners: [listener("http", 1, T0)] })
    expect(next && statusMergePatch(current, next)).toEqual({ status: { ...next, addresses: null } })
  })

  it("needs no write when only the times differ", () => {
    const current = { conditions: [cond("Accepted", "True", T0)], listeners: [listener("http", 1, T0)] }
    const desired = { conditions: [cond("Accepted", "True", T1)], listeners: [listener("http", 1, T1)] }
    expect(mergedStatus("KubernetesGateway", desired, current, OURS)).toBeUndefined()
  })

  it("writes a changed attached-route count", () => {
    const current = { conditions: [cond("Accepted", "True", T0)], listeners: [listener("http", 1, T0)] }
    const desired = { conditions: [cond("Accepted", "True", T1)], listeners: [listener("http", 2, T1)] }
    expect(mergedStatus("KubernetesGateway", desired, current, OURS)?.listeners).toEqual([listener("http", 2, T0)])
  })
})

describe("statusMergePatch", () => {
  it("names every field of the new status and nulls only those it dropped", () => {
    expect(statusMergePatch({ a: 1, b: 2 }, { a: 3 })).toEqual({ status: { a: 3, b: null } })
    expect(statusMergePatch(undefined, { a: 3 })).toEqual({ status: { a: 3 } })
  })
})
