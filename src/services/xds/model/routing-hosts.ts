/**
 * Which VirtualService hosts route to which service hosts, read from the raw resources (delegate
 * VirtualServices included): a route's output depends on its destinations' services (cluster
 * ports) and DestinationRules (hash keys), so a change to those may change the routes of the
 * hosts routing to them, whose names a push must then reach.
 */
import type { ConfigResource } from "../../config-model/resource.js"
import type { VirtualServiceSpec } from "../../config-model/schemas/virtual-service.js"

/** A VirtualService/DestinationRule host as an FQDN: short names are relative to the namespace. */
type ResolveHost = (host: string, namespace: string) => string

/** Whether a (possibly wildcard: `*`, `*.example.com`) host covers `host`. */
export const wildcardCovers = (pattern: string, host: string): boolean =>
  pattern === "*" || pattern === host || (pattern.startsWith("*.") && host.endsWith(pattern.slice(1)))

/**
 * The hosts of every VirtualService with an http route (its own, or one of a delegate it names)
 * whose destination `routesTo` accepts; `routesTo` gets the destination resolved in the namespace
 * of the VirtualService that names it.
 */
export const hostsRoutingTo = (
  virtualServices: ReadonlyArray<ConfigResource<VirtualServiceSpec>>,
  resolve: ResolveHost,
  routesTo: (destination: string) => boolean,
): ReadonlySet<string> => {
  const byName = new Map<string, ConfigResource<VirtualServiceSpec>>()
  for (const vs of virtualServices) byName.set(`${vs.meta.namespace}/${vs.meta.name}`, vs)
  const routes = (vs: ConfigResource<VirtualServiceSpec>, depth: number): boolean =>
    (vs.spec?.http ?? []).some((http) => {
      if ((http.route ?? []).some((d) => routesTo(resolve(d.destination.host, vs.meta.namespace)))) return true
      if (http.delegate === undefined || depth > 0) return false
      const delegate = byName.get(`${http.delegate.namespace || vs.meta.namespace}/${http.delegate.name ?? ""}`)
      return delegate !== undefined && routes(delegate, depth + 1)
    })
  const out = new Set<string>()
  for (const vs of virtualServices) {
    const hosts = vs.spec?.hosts ?? []
    if (hosts.length > 0 && routes(vs, 0)) for (const host of hosts) out.add(resolve(host, vs.meta.namespace))
  }
  return out
}
