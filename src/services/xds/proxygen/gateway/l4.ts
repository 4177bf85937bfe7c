/**
 * TCP and TLS (passthrough) routes of the VirtualServices bound to a Gateway server, as
 * tcp_proxy network filters (the routes helper translates the rules): the first matching `tcp`
 * rule for a TCP server or a TLS server terminating TLS; one SNI filter chain per matching `tls`
 * rule match for a PASSTHROUGH server. Only VirtualServices whose hosts meet the server's take
 * part.
 *
 * A TLS server terminating TLS (SIMPLE, MUTUAL, ...) also takes the `tls` rules of a
 * VirtualService made from a Gateway-API TLSRoute (it has no `tcp` rules): the first match for the
 * server's port and Gateway routes the decrypted stream, SNI aside (the chain already matched it).
 * Hand-written VirtualServices keep the reference's rule: only `tcp` rules on a terminating server.
 */

import { PARENTS_ANNOTATION } from "../../../gateway-api/model.js"
import type { GeneratorNotice } from "../../grpcgen/generator-notices.js"
import type { PushContext } from "../../model/push-context.js"
import { typed } from "../../protocol/typed-any.js"
import type { Listener_Filter } from "../../protocol/xds-types.js"
import { type L4Route, tcpRouteCluster, tlsRoutes } from "../routes/index.js"
import { Filter, TypedConfig } from "../well-known.js"
import { serverMatchesVirtualService } from "./hosts.js"
import type { GatewayServer } from "./merge.js"
import { type VirtualServiceResource, virtualServicesForGateway } from "./virtual-services.js"

export const tcpProxyFilter = (statPrefix: string, cluster: string): Listener_Filter => ({
  name: Filter.tcpProxy,
  typed_config: typed(TypedConfig.tcpProxy, { stat_prefix: statPrefix, cluster }),
})

/** tcp_proxy to a route's upstream: stat prefix the cluster, or `name.namespace` of the VirtualService when weighted. */
const routeFilter = (vs: VirtualServiceResource, route: L4Route): Listener_Filter =>
  route.clusters.length === 1
    ? tcpProxyFilter(route.clusters[0]!, route.clusters[0]!)
    : {
        name: Filter.tcpProxy,
        typed_config: typed(TypedConfig.tcpProxy, {
          stat_prefix: `${vs.meta.name}.${vs.meta.namespace}`,
          ...route.tcpProxy,
        }),
      }

const boundTo = (push: PushContext, server: GatewayServer, proxyNamespace: string) =>
  virtualServicesForGateway(push, server.gateway, proxyNamespace).filter((vs) =>
    serverMatchesVirtualService(server.hosts, vs.spec.hosts ?? [], vs.meta.namespace),
  )

/** Whether `vs` was made from a Gateway-API TLSRoute (its parents annotation names one). */
const fromTlsRoute = (vs: VirtualServiceResource): boolean =>
  (vs.meta.annotations?.[PARENTS_ANNOTATION] ?? "").split(",").some((p) => p.startsWith("TLSRoute/"))

const terminates = (server: GatewayServer): boolean =>
  server.tls !== undefined && server.tlsMode !== "PASSTHROUGH" && server.tlsMode !== "AUTO_PASSTHROUGH"

/**
 * The network filters of a TCP server (or a TLS server terminating TLS): the first matching `tcp`
 * rule, else, on a terminating server, the first matching `tls` rule of a TLSRoute's VirtualService.
 */
export const tcpServerFilters = (
  push: PushContext,
  server: GatewayServer,
  proxyNamespace: string,
  sourceLabels: Readonly<Record<string, string>>,
): { readonly filters: ReadonlyArray<Listener_Filter>; readonly warnings: ReadonlyArray<GeneratorNotice> } => {
  const source = { gateway: server.gateway, sourceLabels, sourceNamespace: proxyNamespace }
  for (const vs of boundTo(push, server, proxyNamespace)) {
    const route = tcpRouteCluster(push, vs, server.port, undefined, source)
    if (route !== undefined && route.clusters.length > 0)
      return { filters: [routeFilter(vs, route)], warnings: route.warnings }
    if (terminates(server) && fromTlsRoute(vs)) {
      const tls = tlsRoutes(push, vs, server.port, source).find((r) => r.clusters.length > 0)
      if (tls !== undefined) return { filters: [routeFilter(vs, tls)], warnings: tls.warnings }
    }
  }
  return { filters: [], warnings: [] }
}

export interface SniChain {
  readonly sniHosts: ReadonlyArray<string>
  readonly filters: ReadonlyArray<Listener_Filter>
}

/**
 * The SNI filter chains of a PASSTHROUGH server: one per matching `tls` rule match. `known`
 * (SNI host → bind, per listener) drops a match repeating an SNI name the listener already has:
 * the proxy rejects two chains with one match.
 */
export const passthroughChains = (
  push: PushContext,
  server: GatewayServer,
  proxyNamespace: string,
  sourceLabels: Readonly<Record<string, string>>,
  known: Map<string, string>,
): { readonly chains: ReadonlyArray<SniChain>; readonly warnings: ReadonlyArray<GeneratorNotice> } => {
  const chains: Array<SniChain> = []
  const warnings: Array<GeneratorNotice> = []
  const source = { gateway: server.gateway, sourceLabels, sourceNamespace: proxyNamespace }
  for (const vs of boundTo(push, server, proxyNamespace)) {
    for (const route of tlsRoutes(push, vs, server.port, source)) {
      if (route.clusters.length === 0) continue
      const duplicates = route.sniHosts.filter((h) => known.get(h) === server.bind)
      if (duplicates.length > 0) {
        warnings.push({
          level: "warning",
          scope: "gateway",
          message: `VirtualService ${vs.meta.namespace}/${vs.meta.name}: field tls: SNI hosts ${duplicates.join(", ")} repeat on port ${server.listenPort} of gateway ${server.gateway}; match skipped`,
        })
        continue
      }
      for (const h of route.sniHosts) known.set(h, server.bind)
      warnings.push(...route.warnings)
      chains.push({ sniHosts: route.sniHosts, filters: [routeFilter(vs, route)] })
    }
  }
  return { chains, warnings }
}
