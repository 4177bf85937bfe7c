/**
 * The status of deployed Gateways: through the conversion (the `mesh` class) the Service's
 * addresses replace the spec's and Programmed is Pending until ready; a waypoint's own status
 * (not reconciled by the conversion) says the same.
 */
import { describe, expect, it } from "vitest"
import { convertGatewayApi } from "../../../../src/services/gateway-api/convert.js"
import { deployedGatewayStatus } from "../../../../src/services/gateway-api/deployment/waypoint-status.js"
import { defaultGatewayApiOptions, type GatewayApiInput } from "../../../../src/services/gateway-api/model.js"

type Status = {
  addresses?: ReadonlyArray<{ type: string; value: string }>
  conditions: ReadonlyArray<{ type: string; status: string; reason: string; message: string }>
  listeners?: ReadonlyArray<{ name: string; conditions: ReadonlyArray<{ type: string; status: string }> }>
}
const NOW = "2024-01-01T00:00:00Z"
const cond = (s: Status, type: string) => s.conditions.find((c) => c.type === type)

const input: GatewayApiInput = {
  gatewayClasses: [],
  gateways: [
    {
      group: "gateway.networking.k8s.io",
      version: "v1",
      kind: "KubernetesGateway",
      meta: { name: "gw", namespace: "default", labels: {}, annotations: {}, generation: 2 },
      spec: { gatewayClassName: "mesh", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
    },
  ],
  httpRoutes: [],
  grpcRoutes: [],
  tcpRoutes: [],
  tlsRoutes: [],
  referenceGrants: [],
  services: [],
  namespaceLabels: new Map(),
}

const gatewayStatusOf = (deployed?: Parameters<typeof deployedGatewayStatus>[1]) => {
  const options = {
    ...defaultGatewayApiOptions(NOW),
    ...(deployed ? { deployedGateways: new Map([["default/gw", deployed]]) } : {}),
  }
  const status = convertGatewayApi(input, options).statuses.find((s) => s.kind === "KubernetesGateway")
  return status?.status as Status
}

describe("Gateway status of a deployed Gateway (conversion)", () => {
  it("without the deployment controller and no Service of the default name: AddressNotUsable", () => {
    expect(cond(gatewayStatusOf(), "Programmed")).toMatchObject({ status: "False", reason: "AddressNotUsable" })
  })

  it("Pending with the awaited object named", () => {
    const status = gatewayStatusOf({
      addresses: [],
      pending: { reason: "Pending", message: "Deployment gw-mesh has no ready replica yet" },
    })
    expect(cond(status, "Accepted")?.status).toBe("True")
    expect(cond(status, "Programmed")).toMatchObject({
      status: "False",
      reason: "Pending",
      message: "Deployment gw-mesh has no ready replica yet",
    })
    expect(status.addresses).toBeUndefined()
  })

  it("Programmed with the Service's addresses", () => {
    const status = gatewayStatusOf({ addresses: [{ type: "IPAddress", value: "203.0.113.5" }] })
    expect(cond(status, "Programmed")).toMatchObject({ status: "True", reason: "Programmed" })
    expect(status.addresses).toEqual([{ type: "IPAddress", value: "203.0.113.5" }])
  })
})

describe("deployedGatewayStatus (waypoints)", () => {
  const listeners = [{ name: "mesh", port: 15008, protocol: "HBONE" }]

  it("is Accepted and Pending until ready", () => {
    const status = deployedGatewayStatus(
      { generation: 1, listeners },
      { addresses: [], pending: { reason: "Pending", message: "waiting" } },
      NOW,
    ) as Status
    expect(cond(status, "Accepted")?.status).toBe("True")
    expect(cond(status, "Programmed")).toMatchObject({ status: "False", reason: "Pending", message: "waiting" })
    expect(status.listeners?.[0]?.conditions.find((c) => c.type === "Programmed")?.status).toBe("False")
    expect(status.addresses).toBeUndefined()
  })

  it("is Programmed with its addresses once ready", () => {
    const status = deployedGatewayStatus(
      { listeners },
      { addresses: [{ type: "IPAddress", value: "10.96.0.9" }] },
      NOW,
    ) as Status
    expect(cond(status, "Programmed")?.status).toBe("True")
    expect(status.addresses).toEqual([{ type: "IPAddress", value: "10.96.0.9" }])
    expect(status.listeners?.map((l) => l.name)).toEqual(["mesh"])
  })
})
