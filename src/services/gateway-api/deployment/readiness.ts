/**
 * Whether a deployed Gateway is programmed: its Deployment has a ready replica and its Service
 * an address (a LoadBalancer's ingress IP or hostname; the cluster IP of any other type). Those
 * addresses are the Gateway's `status.addresses`; until both hold, Programmed is False with
 * reason Pending and a message saying what is awaited.
 */
import { isIP } from "../../config-model/schemas/common.js"
import type { OrchObject, OrchService } from "../../orchestrator/objects.js"
import type { Problem } from "../conditions.js"

export interface GatewayAddressStatus {
  readonly type: "IPAddress" | "Hostname"
  readonly value: string
}

export interface DeployedState {
  readonly addresses: ReadonlyArray<GatewayAddressStatus>
  /** What is awaited (reason Pending); absent once programmed. */
  readonly pending?: Problem
}

export interface ObservedDeployment extends OrchObject {
  readonly spec?: { readonly replicas?: number }
  readonly status?: { readonly readyReplicas?: number; readonly replicas?: number }
}

export const PENDING_REASON = "Pending"

/** The addresses a Service offers; empty while a LoadBalancer waits for its ingress. */
export const serviceAddresses = (svc: OrchService): ReadonlyArray<GatewayAddressStatus> => {
  if (svc.spec?.type === "LoadBalancer") {
    return (svc.status?.loadBalancer?.ingress ?? []).flatMap((ingress): Array<GatewayAddressStatus> => {
      if (ingress.ip !== undefined && ingress.ip !== "") return [{ type: "IPAddress", value: ingress.ip }]
      if (ingress.hostname !== undefined && ingress.hostname !== "")
        return [{ type: "Hostname", value: ingress.hostname }]
      return []
    })
  }
  const ips = svc.spec?.clusterIPs ?? (svc.spec?.clusterIP !== undefined ? [svc.spec.clusterIP] : [])
  return [...new Set(ips)].filter((ip) => isIP(ip)).map((value) => ({ type: "IPAddress", value }))
}

export const deployedState = (
  name: string,
  deployment: ObservedDeployment | undefined,
  svc: OrchService | undefined,
): DeployedState => {
  const addresses = svc === undefined ? [] : serviceAddresses(svc)
  const waiting: Array<string> = []
  if (deployment === undefined) waiting.push(`Deployment ${name} is not created yet`)
  else if ((deployment.status?.readyReplicas ?? 0) < 1) waiting.push(`Deployment ${name} has no ready replica yet`)
  if (svc === undefined) waiting.push(`Service ${name} is not created yet`)
  else if (addresses.length === 0)
    waiting.push(
      svc.spec?.type === "LoadBalancer"
        ? `Service ${name} waits for its load balancer address`
        : `Service ${name} has no cluster IP yet`,
    )
  return waiting.length === 0
    ? { addresses }
    : { addresses, pending: { reason: PENDING_REASON, message: `Waiting for the gateway: ${waiting.join("; ")}` } }
}
