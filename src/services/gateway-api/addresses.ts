/**
 * Where a Gateway the deployment controller does not deploy is served, as the reference resolves
 * it for the Gateway's status (group 9 of issue 36): a Hostname address names the Service of the
 * proxy the user runs (a short name is `<name>.<gateway namespace>.svc.<domain>`); without any
 * address, the Service the reference would deploy, `<gateway>-<class>` (or the name-override
 * annotation). That Service must exist in the Gateway's namespace and have a port for every
 * served listener; otherwise Programmed is False with AddressNotUsable, saying which hostname or
 * port is missing. As for the reference's default class (whose address type is Hostname) with
 * no load-balancer address known, each Service assigned to is a status address by its host name,
 * and Programmed says which service ports it was assigned to. IPAddress addresses are reported
 * as given. A Service with load-balancer (or external) addresses gives those instead; a
 * LoadBalancer Service still waiting for one is not reported, and Programmed is False with
 * AddressNotAssigned ("address pending"), not AddressNotUsable: nothing is wrong, only not yet.
 */
import { isIP } from "../config-model/schemas/common.js"
import type { GatewayAddress } from "../config-model/schemas/gateway-api/types.js"
import { findService, type ServiceIndex } from "./backends.js"
import { type Problem, Reason } from "./conditions.js"
import { objectNames } from "./deployment/names.js"
import type { GatewayState } from "./gateways.js"
import { compareStrings, serviceHost } from "./model.js"

export interface AddressResolution {
  readonly addresses: ReadonlyArray<{ readonly type: string; readonly value: string }>
  /** Why Programmed is False; absent when every requested address is usable. */
  readonly problem?: Problem
  /** `host:port` of each service port the Gateway is assigned to, sorted. */
  readonly assignedTo: ReadonlyArray<string>
}

/** `a`, `a and b`, `a, b, and c`: how the reference lists the services in its messages. */
export const humanJoin = (items: ReadonlyArray<string>): string => {
  if (items.length <= 1) return items.join("")
  if (items.length === 2) return `${items[0]} and ${items[1]}`
  return `${items.slice(0, -1).join(", ")}, and ${items[items.length - 1]}`
}

/** The Service hosts a Gateway's addresses name (none: the Service the reference would deploy). */
const requestedHosts = (gateway: GatewayState, domainSuffix: string): ReadonlyArray<string> => {
  const namespace = gateway.resource.meta.namespace
  const addresses: ReadonlyArray<GatewayAddress> = gateway.resource.spec.addresses ?? []
  if (addresses.length === 0) {
    const names = objectNames(
      { name: gateway.resource.meta.name, annotations: gateway.resource.meta.annotations ?? {} },
      gateway.resource.spec.gatewayClassName,
      "gateway",
    )
    return [serviceHost(names.deployment, namespace, domainSuffix)]
  }
  return addresses
    .filter((a) => a.type === "Hostname")
    .map((a) => (a.value.includes(".") ? a.value : serviceHost(a.value, namespace, domainSuffix)))
}

export const resolveGatewayAddresses = (
  gateway: GatewayState,
  services: ServiceIndex,
  domainSuffix: string,
): AddressResolution => {
  const namespace = gateway.resource.meta.namespace
  const ips = gateway.addresses.filter((a) => a.type === "IPAddress")
  const hosts = requestedHosts(gateway, domainSuffix)
  const ports = [...new Set(gateway.listeners.filter((l) => l.served).map((l) => l.listener.port))].sort(
    (a, b) => a - b,
  )
  const assigned = new Set<string>()
  const named = new Set<string>()
  const external = new Set<string>()
  const pending = new Set<string>()
  const warnings: Array<string> = []
  // A Service found without a port is unusable (AddressNotUsable); one whose load balancer has
  // no address yet is only not assigned (AddressNotAssigned).
  let unusable = false
  for (const host of hosts) {
    const service = findService(services, host, namespace)
    if (service === undefined) {
      const elsewhere = [...new Set((services.byHost.get(host) ?? []).map((s) => `"${s.namespace}"`))].sort(
        compareStrings,
      )
      warnings.push(
        elsewhere.length > 0
          ? `hostname "${host}" not found in namespace "${namespace}", but it was found in namespace(s) ${elsewhere.join(", ")}`
          : `hostname "${host}" not found`,
      )
      unusable = true
      continue
    }
    for (const port of ports) {
      if (service.ports.some((p) => p.port === port)) {
        assigned.add(`${host}:${port}`)
        named.add(host)
        for (const address of service.externalAddresses ?? []) external.add(address)
        if (
          (service.externalAddresses ?? []).length === 0 &&
          service.serviceType === "LoadBalancer" &&
          !pending.has(host)
        ) {
          warnings.push(`address pending for hostname "${host}"`)
          pending.add(host)
        }
      } else {
        warnings.push(`port ${port} not found for hostname "${host}"`)
        unusable = true
      }
    }
  }
  warnings.sort(compareStrings)
  const assignedTo = [...assigned].sort(compareStrings)
  // The load balancers' addresses when there are any, else the Services by host name (not those
  // whose load balancer is pending).
  const addresses =
    external.size > 0
      ? [...external].sort(compareStrings).map((value) => ({ type: isIP(value) ? "IPAddress" : "Hostname", value }))
      : [
          ...ips,
          ...[...named]
            .filter((host) => !pending.has(host))
            .sort(compareStrings)
            .map((value) => ({ type: "Hostname", value })),
        ]
  if (warnings.length === 0) return { addresses, assignedTo }
  const message =
    assignedTo.length > 0
      ? `Assigned to service(s) ${humanJoin(assignedTo)}, but failed to assign to all requested addresses: ${warnings.join("; ")}`
      : `Failed to assign to any requested addresses: ${warnings.join("; ")}`
  return {
    addresses,
    assignedTo,
    problem: { reason: unusable ? Reason.AddressNotUsable : Reason.AddressNotAssigned, message },
  }
}
