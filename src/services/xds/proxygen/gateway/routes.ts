/**
 * RDS for a router: one RouteConfiguration per gateway route name (`http.<port>`,
 * `https.<port>.<portName>.<gateway>.<namespace>`), as the reference builds it. For each server
 * behind the name, each VirtualService bound to the server's Gateway whose hosts meet the
 * server's hosts (namespace-qualified server hosts only meet VirtualServices of that namespace;
 * wildcards either way, the more specific name wins) gives its HTTP routes for the server's port
 * to a virtual host per met host name. Virtual hosts of one name from several VirtualServices
 * concatenate their routes; catch-all routes go last. A server with `httpsRedirect` marks its
 * virtual hosts `require_tls: ALL` (adding bare ones for hosts without a VirtualService). No
 * virtual host at all → the reference's `blackhole:<port>` virtual host without routes, which
 * answers 404. Ports are ignored in host matching, so the domains are the bare names.
 */
import type { ResourceSpec } from "../../cache/resource-spec.js"
import type { Generated, GeneratorNotice } from "../../grpcgen/generator-notices.js"
import type { LocalSlot } from "../../model/local-slot.js"
import { digest, type PushContext } from "../../model/push-context.js"
import type { Route, RouteConfiguration, VirtualHost } from "../../protocol/xds-types.js"
import type { ProxyView } from "../proxy-view.js"
import { httpRoutesFor } from "../routes/index.js"
import { hostsForNamespace, intersectHosts } from "./hosts.js"
import { bareHost, type GatewayServer, gatewaysForProxy, type MergedGateway } from "./merge.js"
import { virtualServiceHosts, virtualServicesForGateway } from "./virtual-services.js"

/** The reference's limit on direct response bodies (1 MiB). */
const MAX_DIRECT_RESPONSE_BODY_BYTES = 1024 * 1024

interface VirtualHostPlan {
  readonly name: string
  readonly domains: Array<string>
  routes: Array<Route>
  /**
   * Which built route lists the routes are, in order (`gateway|namespace/name` of each
   * VirtualService's): the reference compares route identity, not content, when it merges.
   */
  readonly sources: Array<string>
  requireTls: boolean
}

const isCatchAll = (route: Route): boolean => {
  const match = route.match ?? {}
  const regex = match.safe_regex?.regex
  const catchAll = match.prefix === "/" || match.path_separated_prefix === "/" || regex === "*"
  const none = (v: unknown) => v === undefined || (Array.isArray(v) && v.length === 0)
  return catchAll && none(match.headers) && none(match.query_parameters) && none(match.dynamic_metadata)
}

/** Catch-all routes last, the others in their order (the reference's sort). */
const catchAllLast = (routes: ReadonlyArray<Route>): Array<Route> => [
  ...routes.filter((r) => !isCatchAll(r)),
  ...routes.filter(isCatchAll),
]

/**
 * Virtual hosts made of the very same routes (one VirtualService's, built once per Gateway, or
 * the same sequence of them) become one with all their domains, the first name alphabetically
 * kept. Two VirtualServices whose routes merely look alike stay apart: each host keeps its own
 * virtual host name (the reference merges by route identity).
 */
const collapse = (hosts: ReadonlyMap<string, VirtualHostPlan>): ReadonlyArray<VirtualHostPlan> => {
  const out: Array<VirtualHostPlan> = []
  const byRoutes = new Map<string, VirtualHostPlan>()
  for (const name of [...hosts.keys()].sort()) {
    const vh = hosts.get(name)!
    const key = `${vh.requireTls}|${JSON.stringify(vh.sources)}`
    const same = byRoutes.get(key)
    if (same !== undefined) same.domains.push(...vh.domains)
    else {
      const copy = { ...vh, domains: [...vh.domains] }
      byRoutes.set(key, copy)
      out.push(copy)
    }
  }
  return out
}

const virtualHostProto = (vh: VirtualHostPlan): VirtualHost => ({
  name: vh.name,
  domains: vh.domains,
  routes: catchAllLast(vh.routes),
  include_request_attempt_count: true,
  ...(vh.requireTls ? { require_tls: "ALL" } : {}),
})

const emptyRouteConfiguration = (name: string): RouteConfiguration => ({
  name,
  virtual_hosts: [],
  validate_clusters: { value: false },
})

const routeConfiguration = (
  push: PushContext,
  proxy: ProxyView,
  name: string,
  servers: ReadonlyArray<GatewayServer>,
  warnings: Array<GeneratorNotice>,
): RouteConfiguration => {
  const vhosts = new Map<string, VirtualHostPlan>()
  const routesByVs = new Map<string, ReadonlyArray<Route>>()
  for (const server of servers) {
    const redirect = server.tls?.httpsRedirect === true
    for (const vs of virtualServicesForGateway(push, server.gateway, proxy.namespace)) {
      const hosts = intersectHosts(hostsForNamespace(server.hosts, vs.meta.namespace), virtualServiceHosts(push, vs))
      if (hosts.length === 0) continue
      // Built once per Gateway and VirtualService (the first server's port), as the reference does.
      const vsKey = `${server.gateway}|${vs.meta.namespace}/${vs.meta.name}`
      let routes = routesByVs.get(vsKey)
      if (routes === undefined) {
        const made = httpRoutesFor(push, vs, {
          port: server.port,
          gateway: server.gateway,
          sourceLabels: proxy.labels,
          sourceNamespace: proxy.namespace,
        })
        warnings.push(...made.warnings)
        routes = made.routes
        routesByVs.set(vsKey, routes)
      }
      for (const host of hosts) {
        const hostname = host.toLowerCase()
        const existing = vhosts.get(hostname)
        if (existing !== undefined) {
          existing.routes.push(...routes)
          existing.sources.push(vsKey)
          if (redirect) existing.requireTls = true
        } else
          vhosts.set(hostname, {
            name: `${hostname}:${server.port}`,
            domains: [hostname],
            routes: [...routes],
            sources: [vsKey],
            requireTls: redirect,
          })
      }
    }
    if (redirect) {
      for (const host of server.hosts) {
        const hostname = bareHost(host).toLowerCase()
        const existing = vhosts.get(hostname)
        if (existing !== undefined) existing.requireTls = true
        else
          vhosts.set(hostname, {
            name: `${hostname}:${server.port}`,
            domains: [hostname],
            routes: [],
            sources: [],
            requireTls: true,
          })
      }
    }
  }
  const virtualHosts =
    vhosts.size === 0
      ? [{ name: `blackhole:${servers[0]!.port}`, domains: ["*"], routes: [] }]
      : (push.options.proxy.enableRouteCollapse ? collapse(vhosts) : [...vhosts.values()])
          .map(virtualHostProto)
          .sort((a, b) =>
            (a.name as string) < (b.name as string) ? -1 : (a.name as string) > (b.name as string) ? 1 : 0,
          )
  return {
    name,
    virtual_hosts: virtualHosts,
    validate_clusters: { value: false },
    ignore_port_in_host_matching: true,
    max_direct_response_body_size_bytes: { value: MAX_DIRECT_RESPONSE_BODY_BYTES },
  }
}

const built: LocalSlot<
  Map<string, { readonly spec: ResourceSpec<RouteConfiguration>; readonly warnings: ReadonlyArray<GeneratorNotice> }>,
  PushContext
> = { make: () => new Map() }

const routeSpec = (
  push: PushContext,
  proxy: ProxyView,
  merged: MergedGateway,
  name: string,
): { readonly spec: ResourceSpec<RouteConfiguration>; readonly warnings: ReadonlyArray<GeneratorNotice> } => {
  const byKey = push.local(built)
  const memoKey = `${merged.key}|${proxy.scopeKey}|${name}`
  const cached = byKey.get(memoKey)
  if (cached !== undefined) return cached
  const servers = merged.serversByRouteName.get(name)
  const warnings: Array<GeneratorNotice> = []
  // A name no server has: a listener being drained after its Gateway went away still asks.
  const config =
    servers === undefined || servers.length === 0
      ? emptyRouteConfiguration(name)
      : routeConfiguration(push, proxy, name, servers, warnings)
  const entry = { spec: { name, key: `gw-rds|${digest(JSON.stringify(config))}`, build: () => config }, warnings }
  byKey.set(memoKey, entry)
  return entry
}

/** The router's route configurations: the names asked for, or every route name of its servers. */
export const generateGatewayRoutes = (
  push: PushContext,
  proxy: ProxyView,
  names: ReadonlyArray<string>,
): Generated<RouteConfiguration> => {
  const merged = gatewaysForProxy(push, proxy)
  const wanted = names.length > 0 ? names : [...merged.serversByRouteName.keys()]
  const resources: Array<ResourceSpec<RouteConfiguration>> = []
  const warnings: Array<GeneratorNotice> = []
  for (const name of wanted) {
    const entry = routeSpec(push, proxy, merged, name)
    resources.push(entry.spec)
    warnings.push(...entry.warnings)
  }
  return { resources, warnings }
}
