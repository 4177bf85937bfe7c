/**
 * Readiness of a deployed Gateway: Pending while the Deployment is missing or has no ready
 * replica, or the Service is missing or has no address; then programmed, with the addresses of
 * a LoadBalancer's ingress (IP or hostname) or of a ClusterIP Service.
 */
import { describe, expect, it } from "vitest"
import { deployedState, serviceAddresses } from "../../../../src/services/gateway-api/deployment/readiness.js"
import type { OrchService } from "../../../../src/services/orchestrator/objects.js"

const deploymentWith = (readyReplicas?: number) => ({
  metadata: { name: "gw-mesh", namespace: "default" },
  status: readyReplicas === undefined ? {} : { readyReplicas },
})
const lb = (ingress: ReadonlyArray<{ ip?: string; hostname?: string }> = []): OrchService => ({
  metadata: { name: "gw-mesh", namespace: "default" },
  spec: { type: "LoadBalancer", clusterIP: "10.96.0.7" },
  status: { loadBalancer: { ingress } },
})
const clusterIp = (ip?: string): OrchService => ({
  metadata: { name: "waypoint", namespace: "default" },
  spec: { type: "ClusterIP", ...(ip !== undefined ? { clusterIP: ip } : {}) },
})

describe("serviceAddresses", () => {
  it("reads a LoadBalancer's ingress, not its cluster IP", () => {
    expect(serviceAddresses(lb())).toEqual([])
    expect(serviceAddresses(lb([{ ip: "203.0.113.5" }, { hostname: "lb.example.com" }]))).toEqual([
      { type: "IPAddress", value: "203.0.113.5" },
      { type: "Hostname", value: "lb.example.com" },
    ])
  })

  it("reads the cluster IPs of other Services, skipping None", () => {
    expect(serviceAddresses(clusterIp("10.96.0.9"))).toEqual([{ type: "IPAddress", value: "10.96.0.9" }])
    expect(serviceAddresses(clusterIp("None"))).toEqual([])
    expect(
      serviceAddresses({
        metadata: { name: "w" },
        spec: { type: "ClusterIP", clusterIP: "10.96.0.9", clusterIPs: ["10.96.0.9", "fd00::9"] },
      }),
    ).toEqual([
      { type: "IPAddress", value: "10.96.0.9" },
      { type: "IPAddress", value: "fd00::9" },
    ])
  })
})

describe("deployedState", () => {
  it("is Pending while nothing exists, naming both objects", () => {
    const state = deployedState("gw-mesh", undefined, undefined)
    expect(state.addresses).toEqual([])
    expect(state.pending?.reason).toBe("Pending")
    expect(state.pending?.message).toContain("Deployment gw-mesh")
    expect(state.pending?.message).toContain("Service gw-mesh")
  })

  it("is Pending until a replica is ready, even with an address", () => {
    const state = deployedState("gw-mesh", deploymentWith(0), lb([{ ip: "203.0.113.5" }]))
    expect(state.pending?.message).toContain("no ready replica")
    expect(state.pending?.message).not.toContain("Service")
    expect(state.addresses).toEqual([{ type: "IPAddress", value: "203.0.113.5" }])
  })

  it("is Pending while the load balancer has no address", () => {
    const state = deployedState("gw-mesh", deploymentWith(1), lb())
    expect(state.pending?.message).toContain("load balancer address")
  })

  it("is programmed with a ready replica and an address", () => {
    expect(deployedState("gw-mesh", deploymentWith(2), lb([{ hostname: "lb.example.com" }]))).toEqual({
      addresses: [{ type: "Hostname", value: "lb.example.com" }],
    })
    expect(deployedState("waypoint", deploymentWith(1), clusterIp("10.96.0.9"))).toEqual({
      addresses: [{ type: "IPAddress", value: "10.96.0.9" }],
    })
  })
})
