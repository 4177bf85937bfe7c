/**
 * The proxy (sidecar and gateway) generators, dispatched per proxy kind and type URL:
 *
 * | type | sidecar                                          | router (gateway)                 |
 * |------|--------------------------------------------------|----------------------------------|
 * | CDS  | outbound clusters of its scope + inbound clusters | outbound clusters (all, or those its routes reference with PILOT_FILTER_GATEWAY_CLUSTER_CONFIG) |
 * | EDS  | the requested clusters' endpoints                 | same                             |
 * | LDS  | virtualOutbound, per-port outbound, virtualInbound | one listener per Gateway server port |
 * | RDS  | per-port route configurations                     | per-server route configurations  |
 * | SDS  | credentials it may read, by name (DestinationRule `credentialName`) | same, and its Gateways' `credentialName`s |
 * | ECDS | WasmPlugin filter configs                         | same                             |
 * | NDS  | the DNS name table (DNS capture only)             | —                                |
 *
 * A router serving a `mesh-waypoint` Gateway (or a node of type `waypoint`) is a waypoint and
 * gets the waypoint generator's listeners and clusters instead (waypoint/); its other types are
 * a router's.
 *
 * Then, in order: Telemetry (access log, tracing) and WasmPlugin filter references go into
 * every HTTP connection manager, and EnvoyFilter patches apply. Both keep the specs lazy and
 * fold what they add into each spec's key, so proxies they treat alike still share encodings.
 */
import type { ResourceSpec } from "../cache/resource-spec.js"
import { type Generated, type GeneratorNotice, noNotices } from "../grpcgen/generator-notices.js"
import type { PushContext } from "../model/push-context.js"
import { shortType, TypeUrl } from "../protocol/type-urls.js"
import type { Cluster, XdsResourceMessage } from "../protocol/xds-types.js"
import { generateOutboundClusters, generateProxyEndpoints } from "./clusters/index.js"
import type { ProxySubscription } from "./contract.js"
import { generateCredentials } from "./credentials/index.js"
import { generateExtensionConfigs } from "./ecds/index.js"
import { applyEnvoyFilterPatches } from "./envoy-filter-step.js"
import {
  gatewayReferencedHosts,
  gatewaysForProxy,
  generateGatewayListeners,
  generateGatewayRoutes,
  sniDnatClusterName,
} from "./gateway/index.js"
import { decorateListeners } from "./hcm-decoration.js"
import { generateInboundClusters, generateInboundListener } from "./inbound/index.js"
import { generateNameTable } from "./nds/index.js"
import { generateOutboundListeners, generateOutboundRoutes } from "./outbound/index.js"
import type { ProxyView } from "./proxy-view.js"
import { virtualServiceWarnings } from "./routes/index.js"
import { instancesKey, serviceInstances } from "./service-instances.js"
import { generateWaypointClusters, generateWaypointListeners, waypointOf } from "./waypoint/index.js"

const merge = <T extends XdsResourceMessage>(...parts: ReadonlyArray<Generated<T>>): Generated<T> => {
  const resources: Array<ResourceSpec<T>> = []
  let warnings: ReadonlyArray<GeneratorNotice> = noNotices
  for (const part of parts) {
    resources.push(...part.resources)
    if (part.warnings.length > 0) warnings = [...warnings, ...part.warnings]
  }
  return { resources, warnings }
}

const only = <T extends XdsResourceMessage>(resources: ReadonlyArray<ResourceSpec<T>>): Generated<T> => ({
  resources,
  warnings: noNotices,
})

/** Every resource of a type the proxy gets, before names are selected. */
const generateAll = (push: PushContext, typeUrl: string, sub: ProxySubscription): Generated => {
  const { proxy } = sub
  const sidecar = proxy.kind === "sidecar"
  if (!sidecar && waypointOf(proxy) !== undefined) {
    if (typeUrl === TypeUrl.Listener) return decorateListeners(push, proxy, generateWaypointListeners(push, proxy))
    if (typeUrl === TypeUrl.Cluster) return generateWaypointClusters(push, proxy)
    if (typeUrl === TypeUrl.Route) return only([])
  }
  switch (typeUrl) {
    case TypeUrl.Cluster:
      return sidecar
        ? merge(generateOutboundClusters(push, proxy), only(generateInboundClusters(push, proxy)))
        : withSniDnatClusters(
            push,
            proxy,
            generateOutboundClusters(
              push,
              proxy,
              push.options.proxy.filterGatewayClusterConfig ? gatewayReferencedHosts(push, proxy) : undefined,
            ),
          )
    case TypeUrl.Endpoint:
      return only(generateProxyEndpoints(push, proxy, sub.names))
    case TypeUrl.Listener:
      return decorateListeners(
        push,
        proxy,
        sidecar
          ? merge(generateOutboundListeners(push, proxy), generateInboundListener(push, proxy))
          : generateGatewayListeners(push, proxy),
      )
    case TypeUrl.Route: {
      const routes = sidecar
        ? generateOutboundRoutes(push, proxy, sub.names)
        : generateGatewayRoutes(push, proxy, sub.names)
      // What resolving delegate VirtualServices found wrong, reported once per server like any notice.
      const delegates = virtualServiceWarnings(push)
      return delegates.length === 0 ? routes : { ...routes, warnings: [...routes.warnings, ...delegates] }
    }
    case TypeUrl.Secret:
      return generateCredentials(push, proxy, sub.names)
    case TypeUrl.ExtensionConfig:
      return generateExtensionConfigs(push, proxy, sub.names)
    case TypeUrl.NameTable:
      return sidecar && proxy.dnsCapture ? generateNameTable(push, proxy) : only([])
    default:
      return only([])
  }
}

/**
 * A gateway with AUTO_PASSTHROUGH servers forwards mesh mTLS by its SNI
 * (`outbound_.<port>_.<subset>_.<host>`) to a cluster of that name: a twin of each EDS cluster,
 * with the same endpoints and no TLS of its own (the client's passes through).
 */
const withSniDnatClusters = (
  push: PushContext,
  proxy: ProxyView,
  generated: Generated<Cluster>,
): Generated<Cluster> => {
  const merged = gatewaysForProxy(push, proxy)
  if (!merged.ports.some((p) => p.servers.some((s) => s.tlsMode === "AUTO_PASSTHROUGH"))) return generated
  const twins: Array<ResourceSpec<Cluster>> = []
  for (const spec of generated.resources) {
    const parts = spec.name.split("|")
    if (parts.length !== 4 || parts[0] !== "outbound") continue
    const [, port, subset, host] = parts as [string, string, string, string]
    twins.push({
      name: sniDnatClusterName(host, Number(port), subset),
      key: `sni-dnat|${spec.key}`,
      build: () => {
        const { transport_socket: _tls, transport_socket_matches: _matches, ...cluster } = spec.build()
        return { ...cluster, name: sniDnatClusterName(host, Number(port), subset) }
      },
    })
  }
  return { ...generated, resources: [...generated.resources, ...twins] }
}

/** The specs of a type for a sidecar or gateway subscription: the names asked for, or all. */
export const generateForProxy = (push: PushContext, typeUrl: string, sub: ProxySubscription): Generated => {
  const all = applyEnvoyFilterPatches(push, sub.proxy, typeUrl, generateAll(push, typeUrl, sub))
  const selected = sub.wildcard ? all.resources : selectNames(all.resources, sub.names)
  // One cache holds both generators' resources, often under the same names (clusters): the
  // prefix keeps a proxy's encoding from ever being taken for a gRPC client's.
  return {
    resources: selected.map((r) => ({ name: r.name, key: `proxy|${r.key}`, build: r.build })),
    warnings: all.warnings,
  }
}

const selectNames = (
  resources: ReadonlyArray<ResourceSpec>,
  names: ReadonlyArray<string>,
): ReadonlyArray<ResourceSpec> => {
  if (names.length === 0) return resources
  const wanted = new Set(names)
  return resources.filter((r) => wanted.has(r.name))
}

/**
 * What two proxies' resource sets of a type may differ by (with the same names watched): the
 * responder shares a set between connections with the same share key. Endpoints depend on the
 * names alone (and the locality, in the scope key); everything else on the scope, and inbound
 * resources (listeners, clusters of a sidecar) on the proxy's service instances too.
 */
export const proxyShareKey = (push: PushContext, proxy: ProxyView, typeUrl: string): string =>
  proxy.kind === "sidecar" && (typeUrl === TypeUrl.Listener || typeUrl === TypeUrl.Cluster)
    ? `${proxy.scopeKey}|${instancesKey(serviceInstances(push, proxy))}`
    : proxy.scopeKey

/** Why each requested name of a proxy's watch has no resource (shown in `/debug/syncz`). */
export const missingProxyResources = (
  typeUrl: string,
  names: ReadonlyArray<string>,
  resources: ReadonlyArray<{ readonly name: string }>,
): ReadonlyArray<string> => {
  if (resources.length >= names.length) return []
  const present = new Set(resources.map((r) => r.name))
  return names
    .filter((name) => !present.has(name))
    .map((name) => `requested ${shortType(typeUrl)} resource ${name} not found: the proxy's scope has no such resource`)
}
