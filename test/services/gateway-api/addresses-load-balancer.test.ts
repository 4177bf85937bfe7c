/**
 * Issue 36 group 9, the rest: a Gateway served by a Service of type LoadBalancer reports the load
 * balancer's addresses (`status.loadBalancer.ingress`, then `spec.externalIPs`, as the registry
 * reads them); while the load balancer has none, Programmed is False with AddressNotAssigned
 * ("address pending"), not AddressNotUsable, and the pending Service is not reported as an address.
 */
import { describe, expect, it } from "vitest"
import { convertService } from "../../../src/services/registry/orchestrator/service.js"
import { convert, gateway, gatewayStatusOf, httpListener, service } from "./fixtures.js"

const HOST = "edge-proxy.infra.svc.cluster.local"
const ADDRESSES = [{ type: "Hostname", value: "edge-proxy" }]
const gw = gateway("gw", { listeners: [httpListener()], addresses: ADDRESSES }, { namespace: "infra" })
const edge = (extra: Parameters<typeof service>[3]) => service("edge-proxy", "infra", [["http", 80, "HTTP"]], extra)

const programmed = (svc: ReturnType<typeof service>) => {
  const status = gatewayStatusOf(convert({ gateways: [gw], services: [svc] }))
  const c = status.conditions.find((x) => x.type === "Programmed")!
  return { status: c.status, reason: c.reason, message: c.message, addresses: status.addresses }
}

describe("Gateway addresses from a load balancer", () => {
  it("the load balancer's IPs and host names are the Gateway's addresses", () => {
    expect(
      programmed(edge({ serviceType: "LoadBalancer", externalAddresses: ["203.0.113.9", "lb.example.com"] })),
    ).toEqual({
      status: "True",
      reason: "Programmed",
      message: `Resource programmed, assigned to service(s) ${HOST}:80`,
      addresses: [
        { type: "IPAddress", value: "203.0.113.9" },
        { type: "Hostname", value: "lb.example.com" },
      ],
    })
  })

  it("a LoadBalancer without an address yet: AddressNotAssigned, no address reported", () => {
    expect(programmed(edge({ serviceType: "LoadBalancer" }))).toEqual({
      status: "False",
      reason: "AddressNotAssigned",
      message: `Assigned to service(s) ${HOST}:80, but failed to assign to all requested addresses: address pending for hostname "${HOST}"`,
      addresses: undefined,
    })
  })

  it("pending and a missing port together: AddressNotUsable wins", () => {
    const status = gatewayStatusOf(
      convert({
        gateways: [
          gateway(
            "gw",
            { listeners: [httpListener(), httpListener("admin", { port: 8080 })], addresses: ADDRESSES },
            { namespace: "infra" },
          ),
        ],
        services: [edge({ serviceType: "LoadBalancer" })],
      }),
    )
    const c = status.conditions.find((x) => x.type === "Programmed")!
    expect(c.reason).toBe("AddressNotUsable")
    expect(c.message).toContain(`address pending for hostname "${HOST}"; port 8080 not found for hostname "${HOST}"`)
  })

  it("the registry reads them from the orchestrator Service: ingress IP else host name, then externalIPs", () => {
    const result = convertService(
      {
        metadata: { name: "edge-proxy", namespace: "infra" },
        spec: {
          type: "LoadBalancer",
          clusterIP: "10.0.0.9",
          ports: [{ name: "http", port: 80 }],
          externalIPs: ["198.51.100.4"],
        },
        status: { loadBalancer: { ingress: [{ ip: "203.0.113.9" }, { hostname: "lb.example.com" }, {}] } },
      },
      { clusterId: "c1", domain: "cluster.local", trustDomain: "cluster.local" },
    )
    if ("problem" in result) throw new Error(result.problem)
    expect(result.service.serviceType).toBe("LoadBalancer")
    expect(result.service.externalAddresses).toEqual(["203.0.113.9", "lb.example.com", "198.51.100.4"])
    // A ClusterIP Service's load-balancer status (left over) is not read.
    const plain = convertService(
      {
        metadata: { name: "a", namespace: "infra" },
        spec: { type: "ClusterIP", ports: [{ name: "http", port: 80 }] },
        status: { loadBalancer: { ingress: [{ ip: "203.0.113.9" }] } },
      },
      { clusterId: "c1", domain: "cluster.local", trustDomain: "cluster.local" },
    )
    if ("problem" in plain) throw new Error(plain.problem)
    expect(plain.service.externalAddresses).toBeUndefined()
  })
})
