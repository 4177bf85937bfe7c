/** The load-balancer status of served Ingresses (issue 45 point 6). */
import { describe, expect, it } from "@effect/vitest"
import type { IngressSettings } from "../../../src/services/ingress/model.js"
import { ingressAddresses, loadBalancerStatus } from "../../../src/services/ingress/status.js"

const WITH_SERVICE: IngressSettings = {
  ingressClass: "mesh",
  ingressControllerMode: "STRICT",
  ingressService: "mesh-ingressgateway",
}
const NO_SERVICE: IngressSettings = { ...WITH_SERVICE, ingressService: "" }

describe("Ingress status addresses", () => {
  it("the ingress Service's load balancer then external IPs; its external name; nothing when it is missing", () => {
    const lb = {
      loadBalancerIngress: [{ ip: "203.0.113.7" }, { hostname: "lb.example.com" }],
      externalIPs: ["198.51.100.2"],
    }
    expect(ingressAddresses(WITH_SERVICE, lb, [], [])).toEqual(["203.0.113.7", "lb.example.com", "198.51.100.2"])
    expect(
      ingressAddresses(
        WITH_SERVICE,
        { type: "ExternalName", externalName: "edge.example.com", loadBalancerIngress: [], externalIPs: [] },
        [],
        [],
      ),
    ).toEqual(["edge.example.com"])
    expect(ingressAddresses(WITH_SERVICE, undefined, [], [])).toEqual([])
  })

  it("without ingressService: the external IPs of the first running ingress pod's node", () => {
    const pods = [
      { labels: { mesh: "ingressgateway" }, phase: "Pending", nodeName: "n1" },
      { labels: { mesh: "other" }, phase: "Running", nodeName: "n1" },
      { labels: { mesh: "ingressgateway" }, phase: "Running", nodeName: "gone" },
      { labels: { mesh: "ingressgateway" }, phase: "Running", nodeName: "n2" },
    ]
    const nodes = [
      { name: "n1", addresses: [{ type: "ExternalIP", address: "192.0.2.1" }] },
      {
        name: "n2",
        addresses: [
          { type: "InternalIP", address: "10.0.0.2" },
          { type: "ExternalIP", address: "192.0.2.2" },
          { type: "ExternalIP", address: "192.0.2.2" },
        ],
      },
    ]
    expect(ingressAddresses(NO_SERVICE, undefined, pods, nodes)).toEqual(["192.0.2.2"])
    expect(ingressAddresses(NO_SERVICE, undefined, pods.slice(0, 2), nodes)).toEqual([])
  })

  it("status entries: IPs as ip, names as hostname, hostnames sorted before bare IPs by the reference's order", () => {
    expect(loadBalancerStatus(["203.0.113.7", "b.example.com", "2001:db8::1", "a.example.com"])).toEqual([
      { ip: "2001:db8::1" },
      { ip: "203.0.113.7" },
      { hostname: "a.example.com" },
      { hostname: "b.example.com" },
    ])
  })
})
