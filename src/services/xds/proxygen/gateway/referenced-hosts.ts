/**
 * The services a router's routes can reach (`PILOT_FILTER_GATEWAY_CLUSTER_CONFIG` sends a gateway
 * only their clusters): every destination (routes, mirrors, tcp and tls routes, delegates merged)
 * of the VirtualServices bound to its Gateways, the services its AUTO_PASSTHROUGH servers
 * forward to (their hosts matched against the services it sees), and the mesh config's SDS
 * provider when a server names an `sds://` credential.
 */

import type { LocalSlot } from "../../model/local-slot.js"
import { type PushContext, resolveHost } from "../../model/push-context.js"
import type { ProxyView } from "../proxy-view.js"
import { hostMatches, proxyScope } from "../scope.js"
import { sdsProviderHost } from "./external-sds.js"
import { gatewaysForProxy } from "./merge.js"
import { type VirtualServiceResource, virtualServicesForGateway } from "./virtual-services.js"

const destinationsOf = (vs: VirtualServiceResource): ReadonlyArray<string> => [
  ...(vs.spec.http ?? []).flatMap((h) => [
    ...(h.route ?? []).map((r) => r.destination.host),
    ...(h.mirror !== undefined ? [h.mirror.host] : []),
    ...(h.mirrors ?? []).map((m) => m.destination.host),
  ]),
  ...(vs.spec.tcp ?? []).flatMap((t) => (t.route ?? []).map((r) => r.destination.host)),
  ...(vs.spec.tls ?? []).flatMap((t) => (t.route ?? []).map((r) => r.destination.host)),
]

const memo: LocalSlot<Map<string, ReadonlySet<string>>, PushContext> = { make: () => new Map() }

/** The hostnames of the services the router's gateways route to. */
export const gatewayReferencedHosts = (push: PushContext, proxy: ProxyView): ReadonlySet<string> => {
  const merged = gatewaysForProxy(push, proxy)
  const memoKey = `${merged.key}|${proxy.scopeKey}`
  const byKey = push.local(memo)
  const cached = byKey.get(memoKey)
  if (cached !== undefined) return cached
  const hosts = new Set<string>()
  for (const gateway of merged.names)
    for (const vs of virtualServicesForGateway(push, gateway, proxy.namespace))
      for (const host of destinationsOf(vs)) {
        hosts.add(resolveHost(host, vs.meta.namespace, push.options.domainSuffix))
      }
  const autoPassthrough = merged.ports.flatMap((p) =>
    p.servers.filter((s) => s.tlsMode === "AUTO_PASSTHROUGH").flatMap((s) => s.sniHosts),
  )
  if (autoPassthrough.length > 0)
    for (const service of proxyScope(push, proxy).services)
      if (autoPassthrough.some((h) => hostMatches(h, service.hostname))) hosts.add(service.hostname)
  const credentials = merged.ports.flatMap((p) =>
    p.servers.flatMap((s) => [s.tls?.credentialName ?? "", ...(s.tls?.credentialNames ?? [])]),
  )
  const sds = sdsProviderHost(push, credentials)
  if (sds !== undefined) hosts.add(sds)
  byKey.set(memoKey, hosts)
  return hosts
}
