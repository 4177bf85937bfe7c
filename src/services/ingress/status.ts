/**
 * The load-balancer status the mesh writes on the Ingresses it serves, as the reference computes
 * it: with `ingressService` set, that Service's addresses (its external name for an ExternalName
 * Service; else its load balancer's IPs or hostnames, then its external IPs), nothing when the
 * Service is missing; without it, the external IPs of the node of the first running ingress
 * gateway pod (selected as the generated Gateways select them) whose node is known. Entries are
 * IPs or hostnames, sorted by hostname then IP.
 */
import { isIP } from "node:net"
import { ingressGatewaySelector } from "./convert.js"
import type { IngressSettings } from "./model.js"

export interface IngressServiceView {
  readonly type?: string
  readonly externalName?: string
  readonly loadBalancerIngress: ReadonlyArray<{ readonly ip?: string; readonly hostname?: string }>
  readonly externalIPs: ReadonlyArray<string>
}

export interface GatewayPodView {
  readonly labels: Readonly<Record<string, string>>
  readonly phase: string
  readonly nodeName: string
}

export interface NodeView {
  readonly name: string
  readonly addresses: ReadonlyArray<{ readonly type: string; readonly address: string }>
}

export interface LoadBalancerIngress {
  readonly ip?: string
  readonly hostname?: string
}

/** The addresses of the ingress gateway; `service` is `ingressService` of the system namespace when found. */
export const ingressAddresses = (
  settings: IngressSettings,
  service: IngressServiceView | undefined,
  pods: ReadonlyArray<GatewayPodView>,
  nodes: ReadonlyArray<NodeView>,
): ReadonlyArray<string> => {
  if (settings.ingressService !== "") {
    if (service === undefined) return []
    if (service.type === "ExternalName") return service.externalName !== undefined ? [service.externalName] : []
    return [
      ...service.loadBalancerIngress.map((i) => ((i.ip ?? "") === "" ? (i.hostname ?? "") : i.ip!)),
      ...service.externalIPs,
    ]
  }
  const selector = ingressGatewaySelector(settings)
  for (const pod of pods) {
    if (pod.phase !== "Running") continue
    if (!Object.entries(selector).every(([k, v]) => pod.labels[k] === v)) continue
    const node = nodes.find((n) => n.name === pod.nodeName)
    if (node === undefined) continue
    const out: Array<string> = []
    for (const a of node.addresses)
      if (a.type === "ExternalIP" && a.address !== "" && !out.includes(a.address)) out.push(a.address)
    return out
  }
  return []
}

/** Addresses as `status.loadBalancer.ingress` entries: IPs as `ip`, the rest as `hostname`, sorted. */
export const loadBalancerStatus = (addresses: ReadonlyArray<string>): ReadonlyArray<LoadBalancerIngress> =>
  addresses
    .map((a): LoadBalancerIngress => (isIP(a) !== 0 ? { ip: a } : { hostname: a }))
    .sort((x, y) => {
      const hx = x.hostname ?? ""
      const hy = y.hostname ?? ""
      if (hx !== hy) return hx < hy ? -1 : 1
      const ix = x.ip ?? ""
      const iy = y.ip ?? ""
      return ix < iy ? -1 : ix > iy ? 1 : 0
    })
