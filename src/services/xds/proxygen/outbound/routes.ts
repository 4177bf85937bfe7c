/**
 * A sidecar's outbound route configurations (RDS), by the names its listeners ask for: `"<port>"`
 * for the HTTP chain of a port's wildcard listener (every HTTP service of the scope on that port),
 * `"<host>:<port>"` for a sniffed listener on one service's VIP. Each service gets a virtual host
 * (`host:port`, its host names and VIPs as domains) with its VirtualService's routes or the
 * default route; VirtualService hosts that are no service of the port (wildcards such as
 * `*.example.com` matching none, external names) get their own (see virtualServiceOnlyHosts);
 * then a catch-all: `allow_any` to PassthroughCluster
 * (ALLOW_ANY) or `block_all` answering 502 (REGISTRY_ONLY).
 */
import type { ResourceSpec } from "../../cache/resource-spec.js"
import { type Generated, type GeneratorNotice, noNotices } from "../../grpcgen/generator-notices.js"
import { type LocalSlot, memoOf } from "../../model/local-slot.js"
import { digest, type PushContext } from "../../model/push-context.js"
import type { Duration, Route, RouteConfiguration, VirtualHost } from "../../protocol/xds-types.js"
import { destinationRuleWorkloadKey } from "../clusters/destination-rule.js"
import type { ProxyView } from "../proxy-view.js"
import {
  clusterHash,
  collapseVirtualHosts,
  type DestinationHash,
  defaultHttpRoute,
  hashKeyOf,
  httpRoutesFor,
  NO_HASH,
  routeHostDomains,
  type VirtualServiceResource,
  virtualServiceKey,
} from "../routes/index.js"
import { hostMatches } from "../scope.js"
import { PASSTHROUGH_CLUSTER } from "../well-known.js"
import { type OutboundPlan, outboundPlan, type RoutePlan, type TrafficPolicy } from "./plan.js"
import { hostsOverlap, virtualServiceFor } from "./route-deps.js"

export const ALLOW_ANY_VIRTUAL_HOST = "allow_any"
export const BLOCK_ALL_VIRTUAL_HOST = "block_all"

const ZERO: Duration = { seconds: "0", nanos: 0 }

/** The catch-all virtual host of a port's route configuration. */
export const catchAllVirtualHost = (policy: TrafficPolicy): VirtualHost =>
  policy === "ALLOW_ANY"
    ? {
        name: ALLOW_ANY_VIRTUAL_HOST,
        domains: ["*"],
        routes: [
          {
            name: ALLOW_ANY_VIRTUAL_HOST,
            match: { prefix: "/" },
            route: { cluster: PASSTHROUGH_CLUSTER, timeout: ZERO, max_grpc_timeout: ZERO },
          },
        ],
        include_request_attempt_count: true,
      }
    : {
        name: BLOCK_ALL_VIRTUAL_HOST,
        domains: ["*"],
        routes: [{ name: BLOCK_ALL_VIRTUAL_HOST, match: { prefix: "/" }, direct_response: { status: 502 } }],
        include_request_attempt_count: true,
      }

const portOfName = (name: string): number | undefined => {
  if (!/^[0-9]+$/.test(name)) return undefined
  const port = Number(name)
  return port > 0 && port <= 65535 ? port : undefined
}

/** One virtual host to build: a host, and the VirtualService routing it, if any. */
interface HostEntry {
  readonly host: string
  readonly vs?: VirtualServiceResource
  /** A service of the scope (default route without a VirtualService), else a VirtualService-only host. */
  readonly service: boolean
}

interface RouteEntry {
  readonly spec: ResourceSpec<RouteConfiguration>
  readonly warnings: ReadonlyArray<GeneratorNotice>
}

/**
 * The hosts of the sidecar's VirtualServices that are no service, as virtual hosts of their own
 * (the reference's rule): on port 80 those of every VirtualService; on another port only those of
 * a VirtualService that also routes a service of the port. A wildcard host that matches a service
 * of the port is no host of its own: it only lends its routes to the services it is the most
 * specific VirtualService host for. (An exact host that is a service on other ports only is left
 * out, where the reference would serve it on port 80 with a cluster that does not exist.)
 */
const virtualServiceOnlyHosts = (
  push: PushContext,
  plan: OutboundPlan,
  port: number,
  serviceHosts: ReadonlyArray<string>,
): ReadonlyArray<HostEntry> => {
  const services = new Set(serviceHosts)
  const matchesService = (host: string) => services.has(host) || serviceHosts.some((s) => hostsOverlap(host, s))
  const out: Array<HostEntry> = []
  for (const { vs, hosts } of plan.index.virtualServices) {
    if (port !== 80 && !hosts.some(matchesService)) continue
    for (const host of hosts) {
      const isService = host.startsWith("*")
        ? serviceHosts.some((s) => hostMatches(host, s))
        : services.has(host) || push.serviceByHost.has(host)
      if (!isService) out.push({ host, vs, service: false })
    }
  }
  return out
}

/** Per push, per plan (the push's own plans) and route name. */
const entries: LocalSlot<WeakMap<OutboundPlan, Map<string, RouteEntry>>, PushContext> = { make: () => new WeakMap() }

const routeEntry = (push: PushContext, proxy: ProxyView, plan: OutboundPlan, route: RoutePlan): RouteEntry => {
  const port = route.port
  const byPort = route.name === String(port)
  const hosts: Array<HostEntry> = route.hosts.map((host) => {
    const vs = virtualServiceFor(plan.index, host)
    return vs !== undefined ? { host, vs, service: true } : { host, service: true }
  })
  if (byPort) hosts.push(...virtualServiceOnlyHosts(push, plan, port, route.hosts))

  // Routes are computed now (once per plan, name and rule workload) for what they have to say
  // about the config, and for the destination hashes their key depends on.
  const warnings: Array<GeneratorNotice> = []
  const routesByVs = new Map<VirtualServiceResource, ReadonlyArray<Route>>()
  const hashKeyByVs = new Map<VirtualServiceResource, string>()
  for (const { vs } of hosts) {
    if (vs === undefined || routesByVs.has(vs)) continue
    const result = httpRoutesFor(push, vs, { port, sourceLabels: proxy.labels, sourceNamespace: proxy.namespace })
    routesByVs.set(vs, result.routes)
    hashKeyByVs.set(vs, result.hashKey)
    warnings.push(...result.warnings)
  }
  // A service without VirtualService routes on this port: its default route carries its cluster's hash key.
  const defaultHashes = new Map<string, DestinationHash>()
  for (const entry of hosts) {
    if (!entry.service || (entry.vs !== undefined && (routesByVs.get(entry.vs) ?? []).length > 0)) continue
    const service = push.serviceByHost.get(entry.host)
    if (service !== undefined) defaultHashes.set(entry.host, clusterHash(push, proxy, service, port, ""))
  }

  const policy = plan.trafficPolicy
  const collapse = push.options.proxy.enableRouteCollapse
  const namespace = proxy.namespace
  const deps = hosts.map(
    (h) =>
      `${h.host}=${push.fingerprint("service", h.host)}:${
        h.vs !== undefined ? `${virtualServiceKey(push, h.vs)}:${hashKeyByVs.get(h.vs) ?? ""}` : "-"
      }:${hashKeyOf(defaultHashes.get(h.host) ?? NO_HASH)}`,
  )
  const key = `R|${plan.key}|${policy}|${collapse}|${push.options.domainSuffix}|${route.name}|${digest(deps.join(";"))}`

  const build = (): RouteConfiguration => {
    const used = new Set<string>(byPort ? ["*"] : [])
    const virtualHosts: Array<VirtualHost> = []
    for (const entry of hosts) {
      const vsRoutes = entry.vs !== undefined ? (routesByVs.get(entry.vs) ?? []) : []
      const routes =
        vsRoutes.length > 0
          ? vsRoutes
          : entry.service
            ? [defaultHttpRoute(entry.host, port, defaultHashes.get(entry.host))]
            : []
      if (routes.length === 0) continue
      const domains = (
        entry.service ? routeHostDomains(entry.host, port, push, namespace) : [entry.host, `${entry.host}:${port}`]
      ).filter((d) => {
        if (used.has(d)) return false
        used.add(d)
        return true
      })
      // Domains must be unique in a route configuration: a host whose names are all taken is left out.
      if (domains.length === 0) continue
      virtualHosts.push({ name: `${entry.host}:${port}`, domains, routes, include_request_attempt_count: true })
    }
    return {
      name: route.name,
      virtual_hosts: [
        ...(collapse ? collapseVirtualHosts(virtualHosts) : virtualHosts),
        ...(byPort ? [catchAllVirtualHost(policy)] : []),
      ],
      validate_clusters: { value: false },
    }
  }
  return { spec: { name: route.name, key, build }, warnings: warnings.length > 0 ? warnings : noNotices }
}

/**
 * The route configurations named in `names` (every one the outbound listeners refer to when
 * empty). A port no listener has still gets its catch-all, so a watch for it is answered.
 */
export const generateOutboundRoutes = (
  push: PushContext,
  proxy: ProxyView,
  names: ReadonlyArray<string>,
): Generated<RouteConfiguration> => {
  const plan = outboundPlan(push, proxy)
  const byName = memoOf(push.local(entries), plan, () => new Map<string, RouteEntry>())
  const resources: Array<ResourceSpec<RouteConfiguration>> = []
  let warnings: ReadonlyArray<GeneratorNotice> = noNotices
  // Proxies of one plan apply the same DestinationRules unless a rule selects workloads by label.
  const rules = destinationRuleWorkloadKey(push, proxy.namespace, proxy.labels)
  for (const name of names.length > 0 ? names : [...plan.routes.keys()]) {
    let entry = byName.get(`${name}\u0000${rules}`)
    if (entry === undefined) {
      const port = portOfName(name)
      const route = plan.routes.get(name) ?? (port !== undefined ? { name, port, hosts: [] } : undefined)
      if (route === undefined) continue
      entry = routeEntry(push, proxy, plan, route)
      byName.set(`${name}\u0000${rules}`, entry)
    }
    resources.push(entry.spec)
    if (entry.warnings.length > 0) warnings = [...warnings, ...entry.warnings]
  }
  return { resources, warnings }
}
