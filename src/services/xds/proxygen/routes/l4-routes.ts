/**
 * VirtualService `tcp` and `tls` routes → the upstream of a TcpProxy: one cluster, or weighted
 * clusters (`outbound|port|subset|host`, resolved like HTTP destinations). A TCP listener takes
 * the first `tcp` route with a match for it; a TLS listener gets one filter chain per `tls`
 * match (its SNI hosts).
 */
import { BlockList, isIPv4, isIPv6 } from "node:net"
import type { GeneratorNotice } from "../../grpcgen/generator-notices.js"
import type { PushContext } from "../../model/push-context.js"
import type { TcpProxy } from "../../protocol/xds-types.js"
import { destinationCluster } from "./destinations.js"
import { MESH_GATEWAY, resolveGatewayName, type VirtualServiceResource } from "./virtual-services.js"

/** Who asks, for `sourceLabels` / `sourceNamespace` / `gateways` matches; absent: any sidecar. */
export interface L4Source {
  /** The gateway (`namespace/name`) the listener is for; absent: the mesh. */
  readonly gateway?: string
  readonly sourceLabels?: Readonly<Record<string, string>>
  readonly sourceNamespace?: string
}

export interface L4Route {
  /** The TcpProxy upstream: `{cluster}` or `{weighted_clusters: {clusters: [{name, weight}]}}`. */
  readonly tcpProxy: TcpProxy
  /** The clusters it names, in order. */
  readonly clusters: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<GeneratorNotice>
}

export interface TlsRoute extends L4Route {
  readonly sniHosts: ReadonlyArray<string>
  readonly destinationSubnets: ReadonlyArray<string>
}

interface L4Match {
  readonly port?: number | undefined
  readonly destinationSubnets?: ReadonlyArray<string> | undefined
  readonly sourceLabels?: Readonly<Record<string, string>> | undefined
  readonly sourceNamespace?: string | undefined
  readonly gateways?: ReadonlyArray<string> | undefined
}

interface L4Destination {
  readonly destination: {
    readonly host: string
    readonly subset?: string | undefined
    readonly port?: { readonly number: number } | undefined
  }
  readonly weight?: number | undefined
}

const inSubnets = (ip: string, subnets: ReadonlyArray<string>): boolean => {
  const list = new BlockList()
  for (const subnet of subnets) {
    const [address = "", bits] = subnet.split("/")
    const type = isIPv6(address) ? "ipv6" : "ipv4"
    if (!isIPv4(address) && !isIPv6(address)) continue
    if (bits === undefined) list.addAddress(address, type)
    else list.addSubnet(address, Number(bits), type)
  }
  return list.check(ip, isIPv6(ip) ? "ipv6" : "ipv4")
}

const sourceApplies = (match: L4Match, namespace: string, source: L4Source | undefined): boolean => {
  const gateways = match.gateways ?? []
  if (gateways.length > 0)
    return gateways.some((g) => resolveGatewayName(g, namespace) === (source?.gateway ?? MESH_GATEWAY))
  const labels = source?.sourceLabels ?? {}
  for (const [k, v] of Object.entries(match.sourceLabels ?? {})) if (labels[k] !== v) return false
  return (match.sourceNamespace ?? "") === "" || match.sourceNamespace === source?.sourceNamespace
}

const upstream = (
  push: PushContext,
  vs: VirtualServiceResource,
  destinations: ReadonlyArray<L4Destination>,
  port: number,
  at: string,
): L4Route => {
  const warnings: Array<GeneratorNotice> = []
  const kept = destinations
    .map((d, j) => ({ d, j }))
    .filter(({ d }) => destinations.length === 1 || (d.weight ?? 0) > 0)
  const clusters = kept.map(({ d, j }) => ({
    name: destinationCluster(push, d.destination, vs.meta.namespace, port, (host) =>
      warnings.push({
        level: "warning",
        scope: "model",
        message: `VirtualService ${vs.meta.namespace}/${vs.meta.name}: field ${at}.route[${j}].destination.host: ${host} is not in the service registry; connections to it fail`,
      }),
    ),
    weight: destinations.length === 1 ? 100 : (d.weight ?? 0),
  }))
  const tcpProxy = clusters.length === 1 ? { cluster: clusters[0]!.name } : { weighted_clusters: { clusters } }
  return { tcpProxy, clusters: clusters.map((c) => c.name), warnings }
}

/**
 * The upstream of the first `tcp` route of `vs` with a match for `port` (and `destinationIp`,
 * when its match names destination subnets); undefined when none has.
 */
export const tcpRouteCluster = (
  push: PushContext,
  vs: VirtualServiceResource,
  port: number,
  destinationIp?: string,
  source?: L4Source,
): L4Route | undefined => {
  for (const [i, tcp] of (vs.spec.tcp ?? []).entries()) {
    const matches = tcp.match ?? []
    const applies =
      matches.length === 0 ||
      matches.some(
        (m) =>
          ((m.port ?? 0) === 0 || m.port === port) &&
          ((m.destinationSubnets ?? []).length === 0 ||
            destinationIp === undefined ||
            inSubnets(destinationIp, m.destinationSubnets ?? [])) &&
          sourceApplies(m, vs.meta.namespace, source),
      )
    if (applies && (tcp.route ?? []).length > 0) return upstream(push, vs, tcp.route ?? [], port, `tcp[${i}]`)
  }
  return undefined
}

/** One entry per `tls` match of `vs` that applies to `port`: its SNI hosts and upstream, in order. */
export const tlsRoutes = (
  push: PushContext,
  vs: VirtualServiceResource,
  port: number,
  source?: L4Source,
): ReadonlyArray<TlsRoute> =>
  (vs.spec.tls ?? []).flatMap((tls, i) => {
    if ((tls.route ?? []).length === 0) return []
    const route = upstream(push, vs, tls.route ?? [], port, `tls[${i}]`)
    return tls.match
      .filter((m) => ((m.port ?? 0) === 0 || m.port === port) && sourceApplies(m, vs.meta.namespace, source))
      .map((m) => ({ ...route, sniHosts: [...m.sniHosts], destinationSubnets: [...(m.destinationSubnets ?? [])] }))
  })
