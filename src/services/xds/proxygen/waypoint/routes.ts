/**
 * The HTTP routes of a waypoint for one bound service port (the reference's waypoint inbound
 * route configuration, inline in the chain's connection manager, no RDS): the `http` routes of
 * the mesh VirtualServices for the service (in the waypoint's or the service's namespace, a host
 * matching the service's), translated as for sidecars with matches on source labels or source
 * namespace left out (a waypoint cannot see who sent the request). Destinations among the
 * waypoint's services go to their `inbound-vip|port|http[/subset]|host` cluster; others keep
 * their `outbound|...` cluster, which the waypoint then gets too. Without a VirtualService the
 * port's one route goes to the service's own cluster.
 */
import type { Service, ServicePort } from "../../../registry/model.js"
import type { GeneratorNotice } from "../../grpcgen/generator-notices.js"
import { type PushContext, resolveHost } from "../../model/push-context.js"
import type { Route, RouteConfiguration } from "../../protocol/xds-types.js"
import { protocolClass } from "../inbound/ports.js"
import { httpRoutesFor, virtualServiceKey } from "../routes/index.js"
import { type VirtualServiceResource, virtualServicesForProxy } from "../routes/virtual-services.js"
import { hostMatches } from "../scope.js"
import { inboundVipCluster } from "./names.js"

const ZERO = { seconds: "0", nanos: 0 }

/** The VirtualServices that route a bound service at its waypoint. */
export const waypointVirtualServices = (
  push: PushContext,
  waypointNamespace: string,
  service: Service,
): ReadonlyArray<VirtualServiceResource> =>
  virtualServicesForProxy(push, { namespace: waypointNamespace }).filter(
    (vs) =>
      (vs.meta.namespace === waypointNamespace || vs.meta.namespace === service.namespace) &&
      (vs.spec.hosts ?? []).some((h) =>
        hostMatches(resolveHost(h, vs.meta.namespace, push.options.domainSuffix), service.hostname),
      ),
  )

/** The cluster kind of a port in a waypoint's cluster names: `tcp` for TCP-class ports, else `http`. */
export const clusterKind = (port: ServicePort | undefined): "http" | "tcp" =>
  port !== undefined && protocolClass(port.protocol) === "tcp" ? "tcp" : "http"

export interface WaypointRoutes {
  /** The route configuration, inline in the chain. */
  readonly routeConfig: RouteConfiguration
  /** `outbound|...` clusters the routes name (destinations the waypoint does not serve). */
  readonly outboundClusters: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<GeneratorNotice>
  /** What the routes depend on, for the listener's cache key. */
  readonly key: string
}

/** Rewrites a route's `outbound|port|subset|host` clusters to the waypoint's own where it serves the host. */
const rewriteClusters = (route: Route, served: ReadonlyMap<string, Service>, outbound: Set<string>): Route => {
  const action = route.route
  if (action === undefined) return route
  const rename = (name: string): string => {
    const [direction, port, subset, host] = name.split("|")
    const service = host === undefined ? undefined : served.get(host)
    if (direction !== "outbound" || service === undefined) {
      if (direction === "outbound") outbound.add(name)
      return name
    }
    const servicePort = service.ports.find((p) => p.port === Number(port))
    return inboundVipCluster(clusterKind(servicePort), service.hostname, Number(port), subset ?? "")
  }
  const weighted = action.weighted_clusters
  return {
    ...route,
    route: {
      ...action,
      ...(action.cluster !== undefined ? { cluster: rename(action.cluster) } : {}),
      ...(weighted !== undefined
        ? {
            weighted_clusters: {
              ...weighted,
              clusters: (weighted.clusters ?? []).map((c) =>
                c.name !== undefined ? { ...c, name: rename(c.name) } : c,
              ),
            },
          }
        : {}),
    },
  }
}

/** The routes of one HTTP port of a bound service. */
export const waypointRoutes = (
  push: PushContext,
  waypointNamespace: string,
  service: Service,
  port: ServicePort,
  served: ReadonlyMap<string, Service>,
): WaypointRoutes => {
  const own = inboundVipCluster("http", service.hostname, port.port)
  const outbound = new Set<string>()
  const warnings: Array<GeneratorNotice> = []
  const keys: Array<string> = []
  const routes: Array<Route> = []
  for (const vs of waypointVirtualServices(push, waypointNamespace, service)) {
    if ((vs.spec.http ?? []).length === 0) continue
    const translated = httpRoutesFor(push, vs, { port: port.port, sourceLabels: {}, sourceNamespace: "" })
    warnings.push(...translated.warnings)
    keys.push(`${virtualServiceKey(push, vs)}:${translated.hashKey}`)
    routes.push(...translated.routes.map((r) => rewriteClusters(r, served, outbound)))
  }
  const defaultRoute: Route = {
    name: "default",
    match: { prefix: "/" },
    route: {
      cluster: own,
      timeout: ZERO,
      max_stream_duration: { max_stream_duration: ZERO, grpc_timeout_header_max: ZERO },
    },
    decorator: { operation: `${service.hostname}:${port.port}/*` },
  }
  return {
    routeConfig: {
      name: own,
      validate_clusters: { value: false },
      virtual_hosts: [
        { name: `inbound|http|${port.port}`, domains: ["*"], routes: routes.length > 0 ? routes : [defaultRoute] },
      ],
    },
    outboundClusters: [...outbound].sort(),
    warnings,
    key: keys.join(","),
  }
}
