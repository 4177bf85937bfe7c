/**
 * A sidecar's outbound listeners (LDS), as the reference builds them:
 *
 * - `virtualOutbound` on 15001, where the capture rules send outbound connections: it hands each
 *   one to the listener of its original destination (`use_original_dst`); what has none reaches
 *   its catch-all chain, PassthroughCluster (ALLOW_ANY) or BlackHoleCluster (REGISTRY_ONLY), and
 *   connections to 15001 itself are black-holed (a loop otherwise).
 * - per service port, not bound (`bind_to_port: false`, reached through virtualOutbound):
 *   HTTP ports share `0.0.0.0_<port>`, an HTTP chain (HTTP/1.1 or h2c, told by the HTTP
 *   inspector) whose routes come over RDS (`"<port>"`), the rest passing through; TCP ports get
 *   `<vip>_<port>` per VIP (`0.0.0.0_<port>` without one); TLS ports SNI chains; ports of unknown
 *   protocol both an HTTP chain (`"<host>:<port>"` routes on a VIP) and a TCP chain.
 *
 * `PILOT_ENABLE_ALPN_FILTER`: the reference's `istio.alpn` HTTP filter is not in the public proxy
 * API (the proxy would reject the listener), so it is never emitted; the mesh ALPN toward peers is
 * the upstream TLS context's (clusters).
 */
import type { ResourceSpec } from "../../cache/resource-spec.js"
import { type Generated, noNotices } from "../../grpcgen/generator-notices.js"
import type { LocalSlot } from "../../model/local-slot.js"
import type { PushContext } from "../../model/push-context.js"
import { typed } from "../../protocol/typed-any.js"
import type {
  Core_Address,
  Duration,
  FilterChain,
  Listener,
  Listener_Filter,
  ListenerFilter,
} from "../../protocol/xds-types.js"
import type { ProxyView } from "../proxy-view.js"
import { proxyScope } from "../scope.js"
import {
  BLACKHOLE_CLUSTER,
  Filter,
  PASSTHROUGH_CLUSTER,
  TypedConfig,
  VIRTUAL_OUTBOUND_LISTENER,
  VIRTUAL_OUTBOUND_PORT,
} from "../well-known.js"
import {
  type ListenerPlan,
  listenerPlanDigest,
  type OutboundConflicts,
  type OutboundPlan,
  outboundPlan,
  type TrafficPolicy,
  WILDCARD,
} from "./plan.js"
import { clusterTarget, type TcpTarget } from "./route-deps.js"

/** The reference's filter chain names. */
export const VIRTUAL_OUTBOUND_BLACKHOLE_CHAIN = "virtualOutbound-blackhole"
export const VIRTUAL_OUTBOUND_CATCHALL_CHAIN = "virtualOutbound-catchall-tcp"
export const PASSTHROUGH_FILTER_CHAIN = "PassthroughFilterChain"

/** What the HTTP inspector reports for plaintext HTTP/1.x and prior-knowledge HTTP/2. */
export const SNIFFED_HTTP_PROTOCOLS = ["http/1.1", "h2c"] as const

const ZERO: Duration = { seconds: "0", nanos: 0 }

const duration = (ms: number): Duration => ({
  seconds: String(Math.floor(ms / 1000)),
  nanos: Math.round((ms % 1000) * 1_000_000),
})

const address = (ip: string, port: number): Core_Address => ({ socket_address: { address: ip, port_value: port } })

const tcpProxy = (target: TcpTarget): Listener_Filter => ({
  name: Filter.tcpProxy,
  typed_config: typed(TypedConfig.tcpProxy, { stat_prefix: target.statPrefix, ...target.upstream }),
})

const catchAllCluster = (policy: TrafficPolicy): string =>
  policy === "ALLOW_ANY" ? PASSTHROUGH_CLUSTER : BLACKHOLE_CLUSTER

const httpConnectionManager = (listener: ListenerPlan, routeName: string, http10: boolean): Listener_Filter => ({
  name: Filter.httpConnectionManager,
  typed_config: typed(TypedConfig.httpConnectionManager, {
    stat_prefix: `outbound_${listener.address}_${listener.port}`,
    rds: {
      config_source: { ads: {}, initial_fetch_timeout: ZERO, resource_api_version: "V3" },
      route_config_name: routeName,
    },
    // CORS and fault filters do nothing for routes without their per-route config: always
    // present, as in the reference, so the listener does not depend on every route's content.
    http_filters: [
      { name: Filter.cors, typed_config: typed(TypedConfig.cors, {}) },
      { name: Filter.fault, typed_config: typed(TypedConfig.fault, {}) },
      { name: Filter.router, typed_config: typed(TypedConfig.router, {}) },
    ],
    use_remote_address: { value: false },
    normalize_path: { value: true },
    path_with_escaped_slashes_action: "KEEP_UNCHANGED",
    // Sidecars keep long-lived streams (gRPC, watch) open: no idle timeout.
    stream_idle_timeout: ZERO,
    upgrade_configs: [{ upgrade_type: "websocket" }],
    ...(http10 ? { http_protocol_options: { accept_http_10: true } } : {}),
  }),
})

const listenerFilters = (plan: ListenerPlan): ReadonlyArray<ListenerFilter> => [
  { name: Filter.tlsInspector, typed_config: typed(TypedConfig.tlsInspector, {}) },
  ...(plan.httpRoute !== undefined
    ? [{ name: Filter.httpInspector, typed_config: typed(TypedConfig.httpInspector, {}) }]
    : []),
]

/** The listener of one plan entry. */
export const buildOutboundListener = (
  plan: ListenerPlan,
  policy: TrafficPolicy,
  detectionTimeoutMs: number,
  http10 = false,
): Listener => {
  const inspects = plan.httpRoute !== undefined || plan.tls.length > 0
  const chains: Array<FilterChain> = []
  if (plan.httpRoute !== undefined)
    chains.push({
      filter_chain_match: { transport_protocol: "raw_buffer", application_protocols: [...SNIFFED_HTTP_PROTOCOLS] },
      filters: [httpConnectionManager(plan, plan.httpRoute, http10)],
    })
  for (const tls of plan.tls)
    chains.push({
      filter_chain_match: { server_names: [...tls.serverNames], transport_protocol: "tls" },
      filters: [tcpProxy(tls.target)],
    })
  // The proxy narrows chains criterion by criterion without backtracking: beside chains matching
  // on transport or application protocol, a chain without criteria would never see raw bytes the
  // HTTP chain's protocols rule out. What no chain takes therefore goes to the default chain: the
  // service's TCP target, else passthrough (or blackhole). A TCP-only listener has just that chain.
  const fallback = plan.tcp !== undefined ? tcpProxy(plan.tcp.target) : tcpProxy(clusterTarget(catchAllCluster(policy)))
  if (!inspects && plan.tcp !== undefined) chains.push({ filters: [fallback] })
  return {
    name: plan.name,
    address: address(plan.address, plan.port),
    ...(inspects
      ? {
          listener_filters: listenerFilters(plan),
          listener_filters_timeout: duration(detectionTimeoutMs),
          continue_on_listener_filters_timeout: true,
        }
      : {}),
    filter_chains: chains,
    ...(inspects
      ? {
          default_filter_chain: {
            name: plan.tcp !== undefined ? plan.tcp.target.statPrefix : PASSTHROUGH_FILTER_CHAIN,
            filters: [fallback],
          },
        }
      : {}),
    traffic_direction: "OUTBOUND",
    bind_to_port: { value: plan.bindToPort },
  }
}

/** The virtualOutbound listener. */
export const buildVirtualOutbound = (policy: TrafficPolicy, transparent: boolean): Listener => ({
  name: VIRTUAL_OUTBOUND_LISTENER,
  address: address(WILDCARD, VIRTUAL_OUTBOUND_PORT),
  filter_chains: [
    {
      name: VIRTUAL_OUTBOUND_BLACKHOLE_CHAIN,
      filter_chain_match: { destination_port: { value: VIRTUAL_OUTBOUND_PORT } },
      filters: [tcpProxy(clusterTarget(BLACKHOLE_CLUSTER))],
    },
    { name: VIRTUAL_OUTBOUND_CATCHALL_CHAIN, filters: [tcpProxy(clusterTarget(catchAllCluster(policy)))] },
  ],
  use_original_dst: { value: true },
  ...(transparent ? { transparent: { value: true } } : {}),
  traffic_direction: "OUTBOUND",
})

/** Per push, per plan (the push's own plans): proxies of one plan share one result. */
const generated: LocalSlot<WeakMap<OutboundPlan, Generated<Listener>>, PushContext> = { make: () => new WeakMap() }

/**
 * The sidecar's outbound listeners. Each key is the scope key, the options the bytes read and the
 * digest of the listener's plan entry (its address, chains, targets, and the fingerprints of the
 * services and VirtualServices they came from): proxies with the same plan share the specs, and
 * proxies whose plans agree on a listener share its encoding.
 */
export const generateOutboundListeners = (push: PushContext, proxy: ProxyView): Generated<Listener> => {
  const plan = outboundPlan(push, proxy)
  const byPlan = push.local(generated)
  const cached = byPlan.get(plan)
  if (cached !== undefined) return cached
  const scopeKey = proxyScope(push, proxy).key
  const policy = plan.trafficPolicy
  const timeout = push.options.proxy.protocolDetectionTimeoutMs
  const http10 = push.options.proxy.http10 || proxy.http10
  const resources: Array<ResourceSpec<Listener>> = []
  // Without capture rules nothing reaches 15001: the reference builds no virtualOutbound then.
  if (proxy.interceptionMode !== "NONE") {
    const transparent = proxy.interceptionMode === "TPROXY"
    resources.push({
      name: VIRTUAL_OUTBOUND_LISTENER,
      key: `vo|${policy}|${transparent ? "t" : "-"}`,
      build: () => buildVirtualOutbound(policy, transparent),
    })
  }
  for (const listener of plan.listeners)
    resources.push({
      name: listener.name,
      key: `${scopeKey}|${policy}|${timeout}|${http10 ? "h10" : ""}|${listenerPlanDigest(listener)}`,
      build: () => buildOutboundListener(listener, policy, timeout, http10),
    })
  const result = { resources, warnings: plan.warnings.length > 0 ? plan.warnings : noNotices }
  byPlan.set(plan, result)
  return result
}

/** The outbound listener conflicts of the proxy (`pilot_conflict_outbound_listener_tcp_over_current_tcp`). */
export const outboundListenerConflicts = (push: PushContext, proxy: ProxyView): OutboundConflicts =>
  outboundPlan(push, proxy).conflicts
