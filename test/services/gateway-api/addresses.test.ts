/**
 * Issue 36 group 9: a Gateway's addresses status, as the reference resolves it when the mesh
 * does not deploy the Gateway. A Hostname address names the Service of the proxy that serves
 * it: missing (or only in another namespace), or lacking a listener's port, Programmed is False
 * with AddressNotUsable and a message naming what is missing; found, the Gateway's address is
 * the Service's host name (the reference's default class reports Hostname addresses when no
 * load-balancer address is known) and Programmed names the service ports. Without any address the
 * Service the reference would deploy (`<gateway>-<class>`) is looked for.
 */
import { describe, expect, it } from "vitest"
import { humanJoin } from "../../../src/services/gateway-api/addresses.js"
import { convert, gateway, gatewayStatusOf, httpListener, service } from "./fixtures.js"

const listeners = [httpListener("http"), httpListener("admin", { port: 8080 })]
const withAddresses = (addresses: ReadonlyArray<{ type?: string; value: string }>, annotations = {}) => {
  const gw = gateway("gw", { listeners, addresses: addresses as never }, { namespace: "infra" })
  return { ...gw, meta: { ...gw.meta, annotations } }
}
const ingress = (namespace: string, ports: ReadonlyArray<number> = [80, 8080], addresses = ["10.96.0.7"]) =>
  service(
    "edge-proxy",
    namespace,
    ports.map((p) => [`p${p}`, p, "HTTP"] as const),
    { addresses },
  )

const programmed = (parts: Parameters<typeof convert>[0]) => {
  const status = gatewayStatusOf(convert(parts))
  const c = status.conditions.find((x) => x.type === "Programmed")!
  return { status: c.status, reason: c.reason, message: c.message, addresses: status.addresses }
}

describe("Gateway addresses status", () => {
  it("a Hostname address naming an existing Service: its host name, Programmed with the service ports", () => {
    const host = "edge-proxy.infra.svc.cluster.local"
    for (const value of ["edge-proxy", host])
      expect(
        programmed({ gateways: [withAddresses([{ type: "Hostname", value }])], services: [ingress("infra")] }),
      ).toEqual({
        status: "True",
        reason: "Programmed",
        message: `Resource programmed, assigned to service(s) ${host}:80 and ${host}:8080`,
        addresses: [{ type: "Hostname", value: host }],
      })
  })

  it("a Hostname address naming no Service: AddressNotUsable", () => {
    expect(programmed({ gateways: [withAddresses([{ type: "Hostname", value: "edge-proxy" }])] })).toMatchObject({
      status: "False",
      reason: "AddressNotUsable",
      message: 'Failed to assign to any requested addresses: hostname "edge-proxy.infra.svc.cluster.local" not found',
    })
  })

  it("the Service only in another namespace: AddressNotUsable naming where it is", () => {
    const out = programmed({
      gateways: [withAddresses([{ type: "Hostname", value: "edge-proxy.infra.svc.cluster.local" }])],
      services: [{ ...ingress("infra"), namespace: "other" }],
    })
    expect(out.reason).toBe("AddressNotUsable")
    expect(out.message).toBe(
      'Failed to assign to any requested addresses: hostname "edge-proxy.infra.svc.cluster.local" not found in namespace "infra", but it was found in namespace(s) "other"',
    )
  })

  it("a listener port the Service lacks: AddressNotUsable, assigned to the other", () => {
    const host = "edge-proxy.infra.svc.cluster.local"
    expect(
      programmed({
        gateways: [withAddresses([{ type: "Hostname", value: "edge-proxy" }])],
        services: [ingress("infra", [80])],
      }),
    ).toMatchObject({
      status: "False",
      reason: "AddressNotUsable",
      message: `Assigned to service(s) ${host}:80, but failed to assign to all requested addresses: port 8080 not found for hostname "${host}"`,
    })
  })

  it("no address: the Service the reference would deploy (<gateway>-<class>, or the name override)", () => {
    const deployedName = service("gw-mesh", "infra", [
      ["http", 80, "HTTP"],
      ["admin", 8080, "HTTP"],
    ])
    expect(
      programmed({ gateways: [withAddresses([])], services: [{ ...deployedName, addresses: ["10.96.0.9"] }] }),
    ).toMatchObject({
      status: "True",
      addresses: [{ type: "Hostname", value: "gw-mesh.infra.svc.cluster.local" }],
    })
    expect(programmed({ gateways: [withAddresses([])] })).toMatchObject({
      status: "False",
      reason: "AddressNotUsable",
      message: 'Failed to assign to any requested addresses: hostname "gw-mesh.infra.svc.cluster.local" not found',
    })
    const renamed = withAddresses([], { "gateway.mesh.io/name-override": "edge-proxy" })
    expect(programmed({ gateways: [renamed], services: [ingress("infra")] }).status).toBe("True")
  })

  it("an IPAddress address is reported beside the Services found; nothing assigned reports no host", () => {
    const both = withAddresses([{ value: "192.0.2.1" }, { type: "Hostname", value: "edge-proxy" }])
    expect(programmed({ gateways: [both], services: [ingress("infra")] }).addresses).toEqual([
      { type: "IPAddress", value: "192.0.2.1" },
      { type: "Hostname", value: "edge-proxy.infra.svc.cluster.local" },
    ])
    expect(programmed({ gateways: [both], services: [ingress("infra", [9999])] }).addresses).toEqual([
      { type: "IPAddress", value: "192.0.2.1" },
    ])
  })

  it("services are listed as the reference lists them", () => {
    expect([humanJoin(["a"]), humanJoin(["a", "b"]), humanJoin(["a", "b", "c"])]).toEqual([
      "a",
      "a and b",
      "a, b, and c",
    ])
  })
})
