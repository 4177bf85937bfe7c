/**
 * LDS for a router: one listener `<bind or 0.0.0.0>_<port>` per merged server port, bound to the
 * port. A plain-text HTTP port is one HTTP connection manager chain (RDS `http.<port>`). A TLS
 * port has a filter chain per server told apart by SNI (`server_names` = the server's hosts,
 * read by the TLS inspector):
 *
 * - HTTPS terminating (SIMPLE, MUTUAL, ISTIO_MUTUAL): TLS context + HCM with RDS
 *   `https.<port>.<portName>.<gateway>.<namespace>`;
 * - TLS terminating: TLS context + tcp_proxy from the bound VirtualServices' `tcp` rules;
 * - PASSTHROUGH: one chain per matching VirtualService `tls` rule match (its SNI names);
 * - AUTO_PASSTHROUGH: the reference's SNI-DNAT: one chain per service port (and subset) the
 *   server's hosts cover, matching the SNI `outbound_.<port>_.<subset>_.<host>` a mesh client
 *   sends and the mesh mTLS ALPNs, forwarded without terminating to the cluster of that name.
 *
 * A TCP server gets tcp_proxy from the first matching `tcp` rule. A listener left without chains
 * is not sent (the proxy rejects it). Listeners are built once per push for the proxies seeing the
 * same gateways; each one's key is the digest of its content, so replicas and unchanged
 * listeners share one encoding.
 */
import { INFERENCE_ROUTES_ANNOTATION } from "../../../gateway-api/inference-pools.js"
import type { ResourceSpec } from "../../cache/resource-spec.js"
import type { Generated, GeneratorNotice } from "../../grpcgen/generator-notices.js"
import type { LocalSlot } from "../../model/local-slot.js"
import { digest, type PushContext } from "../../model/push-context.js"
import { typed } from "../../protocol/typed-any.js"
import type {
  DownstreamTlsContext,
  Duration,
  FilterChain,
  FilterChainMatch,
  Listener,
  Listener_Filter,
} from "../../protocol/xds-types.js"
import type { ProxyView } from "../proxy-view.js"
import { gatewayVirtualServices } from "../routes/index.js"
import { hostMatches, proxyScope } from "../scope.js"
import { Filter, MESH_ALPN_HTTP, MESH_ALPN_TCP, TypedConfig } from "../well-known.js"
import { credentialSecret } from "./external-sds.js"
import { httpConnectionManager } from "./hcm.js"
import { passthroughChains, tcpProxyFilter, tcpServerFilters } from "./l4.js"
import {
  type GatewayServer,
  gatewaysForProxy,
  isHttpProtocol,
  isHttpsTerminating,
  isPassthrough,
  type MergedPort,
} from "./merge.js"
import { type CredentialSecret, downstreamTlsContext, tlsTransportSocket } from "./tls.js"

/** How long a TLS handshake may take on a gateway chain (slow-handshake attacks), as the reference sets it. */
const TRANSPORT_SOCKET_CONNECT_TIMEOUT: Duration = { seconds: "15", nanos: 0 }

/** Every ALPN a mesh client's mTLS offers: what AUTO_PASSTHROUGH chains accept. */
const MESH_MTLS_ALPNS = [...MESH_ALPN_TCP.slice().reverse(), ...MESH_ALPN_HTTP]

interface ChainPlan {
  readonly sniHosts: ReadonlyArray<string>
  readonly applicationProtocols?: ReadonlyArray<string>
  readonly tls?: DownstreamTlsContext
  readonly filters: ReadonlyArray<Listener_Filter>
}

/** `outbound_.<port>_.<subset>_.<host>`: the SNI a mesh client sends, and the SNI-DNAT cluster's name. */
export const sniDnatClusterName = (host: string, port: number, subset = ""): string =>
  `outbound_.${port}_.${subset}_.${host}`

const filterChainMatch = (chain: ChainPlan): FilterChainMatch | undefined => {
  const sni = chain.sniHosts.includes("*") ? [] : [...chain.sniHosts].sort()
  const alpn = chain.applicationProtocols ?? []
  if (sni.length === 0 && alpn.length === 0) return undefined
  return {
    ...(sni.length > 0 ? { server_names: sni } : {}),
    ...(alpn.length > 0 ? { application_protocols: alpn } : {}),
  }
}

const chainProto = (chain: ChainPlan): FilterChain => {
  const match = filterChainMatch(chain)
  return {
    ...(match !== undefined ? { filter_chain_match: match } : {}),
    filters: chain.filters,
    ...(chain.tls !== undefined ? { transport_socket: tlsTransportSocket(chain.tls) } : {}),
    transport_socket_connect_timeout: TRANSPORT_SOCKET_CONNECT_TIMEOUT,
  }
}

const autoPassthroughChains = (
  push: PushContext,
  proxy: ProxyView,
  server: GatewayServer,
): ReadonlyArray<ChainPlan> => {
  const chains: Array<ChainPlan> = []
  for (const service of proxyScope(push, proxy).services) {
    if (service.location === "MESH_EXTERNAL") continue
    if (!server.sniHosts.some((h) => hostMatches(h, service.hostname))) continue
    const subsets = push.destinationRuleByHost.get(service.hostname)?.subsets ?? []
    for (const port of service.ports) {
      if (port.protocol === "UDP") continue
      for (const subset of ["", ...subsets.map((s) => s.name)]) {
        const cluster = sniDnatClusterName(service.hostname, port.port, subset)
        chains.push({
          sniHosts: [cluster],
          applicationProtocols: MESH_MTLS_ALPNS,
          filters: [tcpProxyFilter(cluster, cluster)],
        })
      }
    }
  }
  return chains
}

const tcpChains = (
  push: PushContext,
  proxy: ProxyView,
  server: GatewayServer,
  knownSni: Map<string, string>,
  warnings: Array<GeneratorNotice>,
): ReadonlyArray<ChainPlan> => {
  if (server.tls !== undefined && isPassthrough(server)) {
    if (server.tlsMode === "AUTO_PASSTHROUGH") return autoPassthroughChains(push, proxy, server)
    const passthrough = passthroughChains(push, server, proxy.namespace, proxy.labels, knownSni)
    warnings.push(...passthrough.warnings)
    return passthrough.chains.map((c) => ({ sniHosts: c.sniHosts, filters: c.filters }))
  }
  const { filters, warnings: routeWarnings } = tcpServerFilters(push, server, proxy.namespace, proxy.labels)
  warnings.push(...routeWarnings)
  if (filters.length === 0) {
    warnings.push({
      level: "warning",
      scope: "gateway",
      message: `Gateway ${server.gateway}: no VirtualService tcp route for server port ${server.port} (${server.portName}); the port gets no listener chain`,
    })
    return []
  }
  if (server.tls === undefined) return [{ sniHosts: [], filters }]
  return [{ sniHosts: server.sniHosts, tls: downstreamTlsContext(server.tls, true, secrets(push, warnings)), filters }]
}

/** Credentials by name for this push; what cannot be served as asked becomes a notice. */
const secrets =
  (push: PushContext, warnings: Array<GeneratorNotice>): CredentialSecret =>
  (name) =>
    credentialSecret(push, name, (message) => warnings.push({ level: "warning", scope: "gateway", message }))

const listenerFor = (
  push: PushContext,
  proxy: ProxyView,
  port: MergedPort,
  knownSni: Map<string, string>,
  warnings: Array<GeneratorNotice>,
): Listener | undefined => {
  const address = port.bind === "" ? "0.0.0.0" : port.bind
  const name = `${address}_${port.listenPort}`
  const defaultStatPrefix = `outbound_${name}`
  const first = port.servers[0]!
  const http10 = push.options.proxy.http10 || proxy.http10
  // As the reference: the ext_proc filter only on gateways with a route to an InferencePool.
  const extProc = gatewayVirtualServices(
    push,
    port.servers.map((s) => s.gateway),
    proxy.namespace,
  ).some((vs) => vs.meta.annotations[INFERENCE_ROUTES_ANNOTATION] !== undefined)
  const chains: Array<ChainPlan> = []
  if (isHttpProtocol(first.protocol)) {
    chains.push({ sniHosts: [], filters: [httpConnectionManager(defaultStatPrefix, first.routeName, http10, extProc)] })
  } else {
    for (const server of port.servers) {
      if (isHttpsTerminating(server)) {
        chains.push({
          sniHosts: server.sniHosts,
          tls: downstreamTlsContext(server.tls!, false, secrets(push, warnings)),
          filters: [
            httpConnectionManager(
              server.name !== "" ? server.name : defaultStatPrefix,
              server.routeName,
              http10,
              extProc,
            ),
          ],
        })
      } else chains.push(...tcpChains(push, proxy, server, knownSni, warnings))
    }
  }
  if (chains.length === 0) return undefined
  // The TLS inspector reads the SNI and ALPN the chains match on.
  const inspect = chains.some((c) => c.sniHosts.length > 0 || c.tls !== undefined)
  return {
    name,
    address: { socket_address: { address, port_value: port.listenPort } },
    bind_to_port: { value: true },
    traffic_direction: "OUTBOUND",
    ...(inspect
      ? { listener_filters: [{ name: Filter.tlsInspector, typed_config: typed(TypedConfig.tlsInspector, {}) }] }
      : {}),
    filter_chains: chains.map(chainProto),
  }
}

const built: LocalSlot<Map<string, Generated<Listener>>, PushContext> = { make: () => new Map() }

/** The router's listeners: one per merged Gateway server port. */
export const generateGatewayListeners = (push: PushContext, proxy: ProxyView): Generated<Listener> => {
  const merged = gatewaysForProxy(push, proxy)
  const memoKey = `${merged.key}|${proxy.scopeKey}`
  const byKey = push.local(built)
  const cached = byKey.get(memoKey)
  if (cached !== undefined) return cached
  const warnings: Array<GeneratorNotice> = [...merged.warnings]
  // SNI names of passthrough rules, per listener port: the proxy rejects repeated chain matches.
  const knownSni = new Map<number, Map<string, string>>()
  const resources: Array<ResourceSpec<Listener>> = []
  for (const port of merged.ports) {
    let known = knownSni.get(port.listenPort)
    if (known === undefined) {
      known = new Map()
      knownSni.set(port.listenPort, known)
    }
    const listener = listenerFor(push, proxy, port, known, warnings)
    if (listener === undefined) continue
    const key = `gw-lds|${digest(JSON.stringify(listener))}`
    resources.push({ name: listener.name as string, key, build: () => listener })
  }
  const result: Generated<Listener> = { resources, warnings }
  byKey.set(memoKey, result)
  return result
}
