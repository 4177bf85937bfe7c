/** The waypoint Gateway, its readiness and the `waypoint list` table. */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  describeReadiness,
  isProgrammed,
  parseTrafficType,
  waypointGateway,
  waypointTable,
} from "../../../../src/services/gateway-api/waypoints/gateway.js"
import type { Obj } from "../../../../src/services/orchestrator/json.js"

const gateway = (
  name: string,
  namespace: string,
  over: { cls?: string; rev?: string; programmed?: string } = {},
): Obj => ({
  metadata: { name, namespace, labels: over.rev === undefined ? {} : { "mesh.io/rev": over.rev } },
  spec: { gatewayClassName: over.cls ?? "mesh-waypoint" },
  ...(over.programmed === undefined
    ? {}
    : {
        status: {
          conditions: [{ type: "Programmed", status: over.programmed, reason: "Pending", message: "no address" }],
        },
      }),
})

describe("waypointGateway", () => {
  it("is a mesh-waypoint Gateway with one HBONE listener on 15008, labelled with its traffic type and revision", () => {
    expect(waypointGateway({ name: "wp", namespace: "shop", trafficType: "workload", revision: "canary" })).toEqual({
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "Gateway",
      metadata: {
        name: "wp",
        namespace: "shop",
        labels: { "mesh.io/waypoint-for": "workload", "mesh.io/rev": "canary" },
      },
      spec: { gatewayClassName: "mesh-waypoint", listeners: [{ name: "mesh", port: 15008, protocol: "HBONE" }] },
    })
  })

  it("leaves out an unset namespace and revision", () => {
    const gw = waypointGateway({ name: "waypoint", namespace: "", trafficType: "service", revision: "" })
    expect(gw.metadata).toEqual({ name: "waypoint", labels: { "mesh.io/waypoint-for": "service" } })
  })

  it("accepts the four traffic types and names the flag and choices otherwise", () => {
    for (const t of ["all", "none", "service", "workload"]) expect(Either.isRight(parseTrafficType(t))).toBe(true)
    expect(
      Either.getLeft(parseTrafficType("pods"))._tag === "Some" && Either.getLeft(parseTrafficType("pods")),
    ).toEqual(expect.objectContaining({ value: 'invalid --for "pods": must be one of all, none, service, workload' }))
  })
})

describe("readiness", () => {
  it("is the Programmed condition being True", () => {
    expect(isProgrammed(gateway("a", "x", { programmed: "True" }))).toBe(true)
    expect(isProgrammed(gateway("a", "x", { programmed: "False" }))).toBe(false)
    expect(isProgrammed(gateway("a", "x"))).toBe(false)
  })

  it("describes what was seen when not ready", () => {
    expect(describeReadiness(gateway("a", "x", { programmed: "False" }))).toBe(
      "condition Programmed is False (Pending: no address)",
    )
    expect(describeReadiness(gateway("a", "x"))).toBe("no Programmed condition in its status")
    expect(describeReadiness(undefined)).toBe("the gateway does not exist")
  })
})

describe("waypointTable", () => {
  const gateways = [
    gateway("zeta", "shop", { programmed: "True", rev: "canary" }),
    gateway("alpha", "bank"),
    gateway("ingress", "shop", { cls: "mesh" }),
  ]

  it("lists waypoints only, by name, with revision (default when unlabelled) and Programmed status", () => {
    expect(waypointTable(gateways, false)).toBe(
      ["NAME      REVISION     PROGRAMMED", "alpha     default      False", "zeta      canary       True", ""].join(
        "\n",
      ),
    )
  })

  it("adds the namespace first with -A, and says when there are none", () => {
    expect(waypointTable(gateways, true).split("\n")[1]).toBe("bank          alpha     default      False")
    expect(waypointTable([gateway("ingress", "shop", { cls: "mesh" })], false)).toBe("No waypoints found.\n")
  })
})
