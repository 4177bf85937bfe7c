/**
 * A waypoint's listeners (the reference's waypoint inbound, single network):
 *
 * - `connect_terminate` on 0.0.0.0:15008: mTLS with the waypoint's certificate (clients must
 *   present one the mesh root signed), an HTTP/2 connection manager that accepts CONNECT
 *   (at most 100 streams per connection) and sends every tunnel to `main_internal`;
 * - `main_internal`, an internal listener: the tunnel's inner destination (original_dst) picks a
 *   chain — a bound service's VIP and port, its HTTP chain (routes, L7 policy, telemetry) or TCP
 *   chain (tcp_proxy, policy as network RBAC is not translated here), or a bound workload's
 *   address (`direct-http` / `direct-tcp`, to `encap`);
 * - `connect_originate`, an internal listener whose tcp_proxy opens HBONE to the destination
 *   (`%DOWNSTREAM_LOCAL_ADDRESS%`, set from the endpoint) through the `connect_originate` cluster.
 *
 * Chains are matched with `filter_chain_match` (destination port, prefix ranges, application
 * protocols for ports whose protocol is sniffed) rather than the reference's matcher tree: the
 * same selection for these chains, and what the route evaluator of the tests follows.
 */
import type { Service, ServicePort } from "../../../registry/model.js"
import type { GeneratorNotice } from "../../grpcgen/generator-notices.js"
import type { PushContext } from "../../model/push-context.js"
import { typed } from "../../protocol/typed-any.js"
import type {
  CidrRange,
  CommonTlsContext,
  Duration,
  FilterChain,
  HttpFilter,
  Listener,
  Listener_Filter,
  RouteConfiguration,
  TcpProxy,
} from "../../protocol/xds-types.js"
import { protocolClass } from "../inbound/ports.js"
import { agentSdsSecret } from "../sds.js"
import { Filter, SDS_DEFAULT, SDS_ROOT, TypedConfig } from "../well-known.js"
import {
  CONNECT_ORIGINATE,
  CONNECT_TERMINATE,
  ENCAP,
  HBONE_PORT,
  inboundVipCluster,
  MAIN_INTERNAL,
  MAX_CONCURRENT_STREAMS,
} from "./names.js"
import { type WaypointPolicy, waypointPolicy } from "./policy.js"
import { waypointRoutes } from "./routes.js"
import { serviceNameOf, type WaypointScope } from "./waypoint-proxy.js"

const ZERO: Duration = { seconds: "0", nanos: 0 }
const router: HttpFilter = { name: Filter.router, typed_config: typed(TypedConfig.router, {}) }
const HTTP_ALPN = ["http/1.0", "http/1.1", "h2c"]

/** The mTLS both ends of HBONE use: the workload certificate and the mesh root, from the agent. */
export const hboneTlsContext = (): CommonTlsContext => ({
  tls_certificate_sds_secret_configs: [agentSdsSecret(SDS_DEFAULT)],
  combined_validation_context: {
    default_validation_context: {},
    validation_context_sds_secret_config: agentSdsSecret(SDS_ROOT),
  },
  alpn_protocols: ["h2"],
})

const connectTerminate = (): Listener => ({
  name: CONNECT_TERMINATE,
  address: { socket_address: { address: "0.0.0.0", port_value: HBONE_PORT } },
  filter_chains: [
    {
      name: "default",
      transport_socket: {
        name: "tls",
        typed_config: typed(TypedConfig.downstreamTls, {
          common_tls_context: hboneTlsContext(),
          require_client_certificate: { value: true },
        }),
      },
      filters: [
        {
          name: Filter.httpConnectionManager,
          typed_config: typed(TypedConfig.httpConnectionManager, {
            stat_prefix: CONNECT_TERMINATE,
            route_config: {
              name: "default",
              virtual_hosts: [
                {
                  name: "default",
                  domains: ["*"],
                  routes: [
                    {
                      match: { connect_matcher: {} },
                      route: {
                        cluster: MAIN_INTERNAL,
                        upgrade_configs: [{ upgrade_type: "CONNECT", connect_config: {} }],
                      },
                    },
                  ],
                },
              ],
            },
            http_filters: [router],
            http2_protocol_options: {
              allow_connect: true,
              max_concurrent_streams: { value: MAX_CONCURRENT_STREAMS },
            },
            upgrade_configs: [{ upgrade_type: "CONNECT" }],
            stream_idle_timeout: ZERO,
            use_remote_address: { value: false },
            set_current_client_cert_details: { subject: { value: true }, dns: true, uri: true },
            forward_client_cert_details: "APPEND_FORWARD",
          }),
        },
      ],
    },
  ],
  // Few, long-lived tunnels: spread them evenly over the proxy's workers.
  connection_balance_config: { exact_balance: {} },
})

const tcpProxy = (cluster: string, extra: TcpProxy = {}): Listener_Filter => ({
  name: Filter.tcpProxy,
  typed_config: typed(TypedConfig.tcpProxy, { stat_prefix: cluster, cluster, ...extra }),
})

const httpManager = (statPrefix: string, routeConfig: RouteConfiguration, policy: WaypointPolicy): Listener_Filter => ({
  name: Filter.httpConnectionManager,
  typed_config: typed(TypedConfig.httpConnectionManager, {
    stat_prefix: statPrefix,
    codec_type: "AUTO",
    route_config: routeConfig,
    http_filters: [...policy.filters, router],
    use_remote_address: { value: false },
    normalize_path: { value: true },
    path_with_escaped_slashes_action: "KEEP_UNCHANGED",
    upgrade_configs: [{ upgrade_type: "websocket" }],
    stream_idle_timeout: ZERO,
  }),
})

const cidr = (ip: string): CidrRange => ({
  address_prefix: ip,
  prefix_len: { value: ip.includes(":") ? 128 : 32 },
})

interface Match {
  readonly port?: number
  readonly addresses: ReadonlyArray<string>
  readonly alpn?: ReadonlyArray<string>
}

const chain = (name: string, match: Match, filters: ReadonlyArray<Listener_Filter>): FilterChain => ({
  name,
  filter_chain_match: {
    ...(match.port !== undefined ? { destination_port: { value: match.port } } : {}),
    prefix_ranges: match.addresses.map(cidr),
    ...(match.alpn !== undefined ? { application_protocols: match.alpn } : {}),
  },
  filters,
})

export interface MainInternal {
  readonly listener: Listener
  readonly outboundClusters: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<GeneratorNotice>
  readonly key: string
}

/** The chains of one service port: HTTP, TCP, or both (sniffed) — UDP is not proxied. */
const portChains = (
  push: PushContext,
  scope: WaypointScope,
  service: Service,
  port: ServicePort,
  served: ReadonlyMap<string, Service>,
  policy: WaypointPolicy,
  sink: { outbound: Set<string>; warnings: Array<GeneratorNotice>; keys: Array<string> },
): ReadonlyArray<FilterChain> => {
  const klass = protocolClass(port.protocol)
  if (klass === undefined) return []
  const match = { port: port.port, addresses: service.addresses }
  const out: Array<FilterChain> = []
  if (klass !== "tcp") {
    const routes = waypointRoutes(push, scope.ref.namespace, service, port, served)
    for (const c of routes.outboundClusters) sink.outbound.add(c)
    sink.warnings.push(...routes.warnings)
    sink.keys.push(routes.key)
    const name = inboundVipCluster("http", service.hostname, port.port)
    out.push(
      chain(name, klass === "auto" ? { ...match, alpn: HTTP_ALPN } : match, [
        httpManager(name, routes.routeConfig, policy),
      ]),
    )
  }
  if (klass !== "http") {
    const name = inboundVipCluster("tcp", service.hostname, port.port)
    out.push(chain(name, match, [tcpProxy(name)]))
  }
  return out
}

/** `main_internal`: a chain per bound service port, and the direct chains for bound workloads. */
export const mainInternal = (push: PushContext, scope: WaypointScope): MainInternal => {
  const served = new Map(scope.services.map((s) => [s.hostname, s]))
  const sink = { outbound: new Set<string>(), warnings: [] as Array<GeneratorNotice>, keys: [] as Array<string> }
  const chains: Array<FilterChain> = []
  const waypointOnly = waypointPolicy(push, scope.ref, undefined)
  const policyWarnings = new Set(waypointOnly.warnings)
  for (const service of scope.services) {
    const policy = waypointPolicy(push, scope.ref, { name: serviceNameOf(service), namespace: service.namespace })
    sink.keys.push(policy.applied.join(","))
    for (const w of policy.warnings) policyWarnings.add(w)
    for (const port of service.ports) chains.push(...portChains(push, scope, service, port, served, policy, sink))
  }
  if (scope.workloadAddresses.length > 0) {
    const direct = { addresses: scope.workloadAddresses }
    const routeConfig: RouteConfiguration = {
      name: ENCAP,
      validate_clusters: { value: false },
      virtual_hosts: [
        {
          name: "inbound|http|0",
          domains: ["*"],
          routes: [
            {
              name: "default",
              match: { prefix: "/" },
              route: { cluster: ENCAP, timeout: ZERO, max_stream_duration: { max_stream_duration: ZERO } },
            },
          ],
        },
      ],
    }
    chains.push(
      chain("direct-http", { ...direct, alpn: HTTP_ALPN }, [httpManager("direct-http", routeConfig, waypointOnly)]),
      chain("direct-tcp", direct, [tcpProxy(ENCAP)]),
    )
  }
  sink.keys.push(waypointOnly.applied.join(","))
  return {
    listener: {
      name: MAIN_INTERNAL,
      internal_listener: {},
      listener_filters: [
        { name: Filter.originalDst, typed_config: typed(TypedConfig.originalDst, {}) },
        { name: Filter.httpInspector, typed_config: typed(TypedConfig.httpInspector, {}) },
      ],
      traffic_direction: "INBOUND",
      filter_chains: chains,
    },
    outboundClusters: [...sink.outbound].sort(),
    warnings: [
      ...sink.warnings,
      ...[...policyWarnings].map((message): GeneratorNotice => ({ level: "warning", scope: "authorization", message })),
    ],
    key: sink.keys.join("|"),
  }
}

/** `connect_originate`: tunnels the inner stream to the destination over HBONE. */
const connectOriginate = (): Listener => ({
  name: CONNECT_ORIGINATE,
  use_original_dst: { value: false },
  internal_listener: {},
  listener_filters: [{ name: Filter.originalDst, typed_config: typed(TypedConfig.originalDst, {}) }],
  filter_chains: [
    { filters: [tcpProxy(CONNECT_ORIGINATE, { tunneling_config: { hostname: "%DOWNSTREAM_LOCAL_ADDRESS%" } })] },
  ],
})

export const waypointListeners = (
  push: PushContext,
  scope: WaypointScope,
): { readonly listeners: ReadonlyArray<Listener>; readonly main: MainInternal } => {
  const main = mainInternal(push, scope)
  return { listeners: [connectTerminate(), main.listener, connectOriginate()], main }
}
