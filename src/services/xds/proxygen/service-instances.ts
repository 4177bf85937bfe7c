/**
 * The service instances of a proxy: the service ports it serves, found as the endpoints whose
 * address is one of the proxy's addresses (the reference's rule). Inbound listeners and inbound
 * clusters are built from them. Indexed once per PushContext.
 */
import type { Endpoint, Service, ServicePort } from "../../registry/model.js"
import type { LocalSlot } from "../model/local-slot.js"
import type { PushContext } from "../model/push-context.js"
import type { ProxyView } from "./proxy-view.js"

export interface ServiceInstance {
  readonly service: Service
  readonly servicePort: ServicePort
  /** The port the workload listens on (the endpoint's port). */
  readonly targetPort: number
  readonly endpoint: Endpoint
}

/** The push's endpoints by address, built once per push. */
const byAddress: LocalSlot<ReadonlyMap<string, ReadonlyArray<Endpoint>>, PushContext> = {
  make: (push) => {
    const built = new Map<string, Array<Endpoint>>()
    for (const list of push.endpointsByHost.values())
      for (const endpoint of list) {
        const at = built.get(endpoint.address)
        if (at === undefined) built.set(endpoint.address, [endpoint])
        else at.push(endpoint)
      }
    return built
  },
}

const addressIndex = (push: PushContext): ReadonlyMap<string, ReadonlyArray<Endpoint>> => push.local(byAddress)

/** The proxy's service instances, one per (service, service port), sorted by target port then host. */
export const serviceInstances = (push: PushContext, proxy: ProxyView): ReadonlyArray<ServiceInstance> => {
  const index = addressIndex(push)
  const seen = new Set<string>()
  const out: Array<ServiceInstance> = []
  for (const ip of proxy.ips)
    for (const endpoint of index.get(ip) ?? []) {
      const service = push.serviceByHost.get(endpoint.hostname)
      if (service === undefined) continue
      const servicePort = service.ports.find((p) => p.name === endpoint.servicePortName)
      if (servicePort === undefined) continue
      const key = `${service.hostname}|${servicePort.port}`
      if (seen.has(key)) continue
      seen.add(key)
      out.push({ service, servicePort, targetPort: endpoint.port, endpoint })
    }
  return out.sort((a, b) =>
    a.targetPort !== b.targetPort
      ? a.targetPort - b.targetPort
      : a.service.hostname < b.service.hostname
        ? -1
        : a.service.hostname > b.service.hostname
          ? 1
          : 0,
  )
}

/** A digest-ready text of the instances: what inbound resources depend on (not the addresses). */
export const instancesKey = (instances: ReadonlyArray<ServiceInstance>): string =>
  instances
    .map((i) => `${i.service.hostname}:${i.servicePort.port}/${i.servicePort.protocol}>${i.targetPort}`)
    .join(",")
