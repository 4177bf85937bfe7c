/**
 * What the routes of a VirtualService depend on, for the dependency keys of the resources that
 * contain them: its spec (delegates merged) and whether and how each destination host is known
 * (the cluster port defaults to a service's only port). The destinations' hash keys depend on
 * the asking proxy's DestinationRules too: those are `HttpRoutes.hashKey`, keyed beside this.
 */

import type { LocalSlot } from "../../model/local-slot.js"
import { digest, type PushContext, resolveHost } from "../../model/push-context.js"
import type { VirtualServiceResource } from "./virtual-services.js"

const keys: LocalSlot<WeakMap<VirtualServiceResource, string>, PushContext> = { make: () => new WeakMap() }

/** The destination hosts (FQDN) the VirtualService's http, tcp and tls routes and mirrors name, sorted. */
export const destinationHosts = (push: PushContext, vs: VirtualServiceResource): ReadonlyArray<string> => {
  const hosts = new Set<string>()
  const add = (host: string) => hosts.add(resolveHost(host, vs.meta.namespace, push.options.domainSuffix))
  for (const http of vs.spec.http ?? []) {
    for (const d of http.route ?? []) add(d.destination.host)
    if (http.mirror !== undefined) add(http.mirror.host)
    for (const m of http.mirrors ?? []) add(m.destination.host)
  }
  for (const r of [...(vs.spec.tcp ?? []), ...(vs.spec.tls ?? [])])
    for (const d of r.route ?? []) add(d.destination.host)
  return [...hosts].sort()
}

/** A digest of everything `httpRoutesFor` / `tcpRouteCluster` / `tlsRoutes` read of `vs` (memoised per push). */
export const virtualServiceKey = (push: PushContext, vs: VirtualServiceResource): string => {
  const byVs = push.local(keys)
  let key = byVs.get(vs)
  if (key === undefined) {
    const services = destinationHosts(push, vs).map((host) => {
      const service = push.serviceByHost.get(host)
      return service === undefined ? `${host}=-` : `${host}=${push.fingerprint("service", service.hostname)}`
    })
    key = digest(JSON.stringify([vs.meta.namespace, vs.meta.name, vs.spec, services]))
    byVs.set(vs, key)
  }
  return key
}
