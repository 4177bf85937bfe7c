/**
 * Issue 36 group 2 (the remote class): a GatewayClass of the unmanaged-gateway controller is
 * accepted; its Gateways are remote (in another cluster): Accepted, Programmed with "remote" in
 * the message and their spec addresses, no listener status, nothing generated, routes not
 * attached (and not answered for).
 */
import { describe, expect, it } from "vitest"
import {
  convert,
  gateway,
  gatewayClass,
  gatewayStatusOf,
  httpListener,
  httpRoute,
  parentGw,
  statusOf,
} from "./fixtures.js"

const remoteClass = gatewayClass("mesh-remote", "mesh.io/unmanaged-gateway")
const remote = gateway(
  "gw",
  {
    gatewayClassName: "mesh-remote",
    listeners: [httpListener()],
    addresses: [{ type: "Hostname", value: "gw.remote.example" }],
  },
  { namespace: "infra" },
)

describe("remote Gateways", () => {
  const out = convert({
    gatewayClasses: [remoteClass],
    gateways: [remote],
    httpRoutes: [
      httpRoute("r", { parentRefs: [parentGw], rules: [{ backendRefs: [{ name: "backend", port: 8080 }] }] }),
    ],
  })

  it("the class is accepted, handled by the unmanaged-gateway controller", () => {
    const status = statusOf<{ conditions: Array<{ type: string; status: string; message: string }> }>(
      out,
      "GatewayClass",
      "mesh-remote",
      "",
    )
    expect(status?.conditions.map((c) => [c.type, c.status, c.message])).toEqual([
      ["Accepted", "True", "Handled by mesh.io/unmanaged-gateway"],
    ])
  })

  it("the Gateway: accepted and programmed as remote, with its spec addresses and no listener status", () => {
    const status = gatewayStatusOf(out)
    expect(status.conditions.map((c) => [c.type, c.status, c.reason, c.message])).toEqual([
      ["Accepted", "True", "Accepted", "Resource accepted"],
      ["Programmed", "True", "Programmed", "This Gateway is remote; the mesh will not program it"],
    ])
    expect(status.addresses).toEqual([{ type: "Hostname", value: "gw.remote.example" }])
    expect(status.listeners).toEqual([])
  })

  it("nothing is generated and routes to it get no status from this controller", () => {
    expect(out.gateways).toEqual([])
    expect(out.virtualServices).toEqual([])
    expect(statusOf(out, "HTTPRoute", "r")).toBeUndefined()
  })
})
