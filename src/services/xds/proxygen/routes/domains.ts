/**
 * The domains of a service's virtual host, and the route-collapse optimisation
 * (`PILOT_ENABLE_ROUTE_COLLAPSE_OPTIMIZATION`): virtual hosts with identical routes become one
 * with the union of their domains.
 */

import { lookupService, type PushContext } from "../../model/push-context.js"
import type { VirtualHost } from "../../protocol/xds-types.js"

/** An address as a Host header spells it: IPv6 in brackets. */
const hostForm = (address: string): string =>
  address.includes(":") && !address.startsWith("[") ? `[${address}]` : address

/**
 * The names a Kubernetes-style host (`name.ns.svc.<suffix>`) is also reached by from a proxy in
 * `proxyNamespace`: `name`, `name.ns.svc`, `name.ns` in its own namespace; `name.ns`,
 * `name.ns.svc` from others. Other hosts have no short forms.
 */
export const altHosts = (host: string, proxyNamespace: string, domainSuffix: string): ReadonlyArray<string> => {
  const svc = `.svc.${domainSuffix}`
  if (!host.endsWith(svc)) return []
  const nameNs = host.slice(0, -svc.length)
  const dot = nameNs.indexOf(".")
  if (dot <= 0 || dot === nameNs.length - 1 || nameNs.indexOf(".", dot + 1) >= 0) return []
  const name = nameNs.slice(0, dot)
  const namespace = nameNs.slice(dot + 1)
  return namespace === proxyNamespace ? [name, `${nameNs}.svc`, nameNs] : [nameNs, `${nameNs}.svc`]
}

/**
 * The domains of the virtual host of `host` on `port`: the host, its short forms (see
 * `altHosts`) and the service's VIPs, each without and with `:port` (the reference's order).
 */
export const routeHostDomains = (
  host: string,
  port: number,
  push: PushContext,
  proxyNamespace: string,
): ReadonlyArray<string> => {
  const service = push.serviceByHost.get(host) ?? lookupService(push, host)
  const names = [
    host,
    ...altHosts(host, proxyNamespace, push.options.domainSuffix),
    ...(service?.addresses ?? []).filter((a) => a !== "" && a !== "0.0.0.0" && a !== "::").map(hostForm),
  ]
  const out: Array<string> = []
  const seen = new Set<string>()
  for (const name of names)
    for (const domain of [name, `${name}:${port}`])
      if (!seen.has(domain)) {
        seen.add(domain)
        out.push(domain)
      }
  return out
}

/**
 * Virtual hosts whose content other than name and domains is identical, merged into the first
 * of them with the union of the domains (in order); the others' order is kept.
 */
export const collapseVirtualHosts = (vhosts: ReadonlyArray<VirtualHost>): ReadonlyArray<VirtualHost> => {
  const byContent = new Map<string, { vhost: VirtualHost; domains: Array<string>; seen: Set<string> }>()
  const order: Array<string> = []
  for (const vhost of vhosts) {
    const { name: _name, domains, ...rest } = vhost
    const key = JSON.stringify(rest)
    const list = domains ?? []
    const entry = byContent.get(key)
    if (entry === undefined) {
      byContent.set(key, { vhost: { ...vhost }, domains: [...new Set(list)], seen: new Set(list) })
      order.push(key)
      continue
    }
    for (const d of list)
      if (!entry.seen.has(d)) {
        entry.seen.add(d)
        entry.domains.push(d)
      }
  }
  return order.map((key) => {
    const entry = byContent.get(key)!
    return { ...entry.vhost, domains: entry.domains }
  })
}
