/**
 * The sidecar's `virtualInbound` listener (0.0.0.0:15006): every connection the capture rules
 * redirect to the workload arrives here and is matched to a filter chain by its original
 * destination port, its transport (TLS or plaintext, told by the TLS inspector) and its ALPN
 * (from the TLS handshake, or the HTTP inspector's guess for plaintext).
 *
 * Per inbound port (ports.ts), by its protocol and the PeerAuthentication mode that applies to
 * the workload port, the chains of chain-options.ts; the TLS and HTTP inspectors run only on the
 * ports whose chains need them (inspectors.ts). Ports no service declares are served by
 * passthrough chains (as an `auto` port, by the workload-wide mode) to the original destination;
 * the listener's own port is a black hole (a loop otherwise).
 *
 * HTTP chains carry the JWT filter (RequestAuthentication), the RBAC filters (AuthorizationPolicy)
 * and the router; TCP chains the network RBAC filters and tcp_proxy.
 */
import type { ResourceSpec } from "../../cache/resource-spec.js"
import type { Generated, GeneratorNotice } from "../../grpcgen/generator-notices.js"
import { proxyFetchedJwks } from "../../model/jwks-input.js"
import type { LocalSlot } from "../../model/local-slot.js"
import { workloadMtlsMode, workloadMtlsPorts } from "../../model/mtls-mode.js"
import { digest, type PushContext } from "../../model/push-context.js"
import { typed } from "../../protocol/typed-any.js"
import type {
  Duration,
  FilterChain,
  HttpFilter,
  Listener,
  Listener_Filter,
  TransportSocket,
} from "../../protocol/xds-types.js"
import type { ProxyView } from "../proxy-view.js"
import { proxyScope } from "../scope.js"
import {
  BLACKHOLE_CLUSTER,
  Filter,
  INBOUND_PASSTHROUGH_CLUSTER,
  TypedConfig,
  VIRTUAL_INBOUND_LISTENER,
  VIRTUAL_INBOUND_PORT,
} from "../well-known.js"
import { authzFilters } from "./authz.js"
import { type ChainOption, chainOptions, type Mode, type ProtocolClass } from "./chain-options.js"
import { inspectorFilters } from "./inspectors.js"
import { applicableRequestAuthentications, jwtFilter } from "./jwt.js"
import { type InboundPort, inboundPorts } from "./ports.js"
import { ingressTlsSocket, meshMtlsSocket } from "./tls.js"

const ZERO: Duration = { seconds: "0", nanos: 0 }

const durationMs = (ms: number): Duration => ({
  seconds: String(Math.floor(ms / 1000)),
  nanos: (ms % 1000) * 1_000_000,
})

/**
 * The name of every chain of an inbound port, as the reference names them (`0.0.0.0_<port>`):
 * EnvoyFilters and tools match chains by it.
 */
export const inboundChainName = (port: number): string => `0.0.0.0_${port}`

/** The proxy's first address that is neither loopback, link-local nor unspecified. */
const unicastAddress = (proxy: ProxyView): string | undefined =>
  proxy.ips.find(
    (ip) => !/^(127\.|169\.254\.|0\.0\.0\.0$)/.test(ip) && !/^(::1?$|fe[89ab][0-9a-f]:)/i.test(ip) && ip.length > 0,
  )

/**
 * A Sidecar ingress port's chains are named by the address it listens on: its `bind`, else the
 * proxy's own address (the reference's naming); a service port's by the wildcard.
 */
const chainNameOf = (port: InboundPort, proxy: ProxyView): string =>
  port.sidecarIngress === undefined
    ? inboundChainName(port.port)
    : `${port.sidecarIngress.bind ?? unicastAddress(proxy) ?? "0.0.0.0"}_${port.port}`

const modeOf = (mode: string): Mode => (mode === "STRICT" || mode === "DISABLE" ? mode : "PERMISSIVE")

interface PortPlan {
  readonly port: InboundPort
  readonly mode: Mode
  /** The name of the port's chains. */
  readonly name: string
  /** The Sidecar ingress's own TLS socket, replacing the mesh's mTLS. */
  readonly socket?: TransportSocket
}

/** Everything the listener's bytes are made of, decided once per workload and push. */
interface Plan {
  readonly ports: ReadonlyArray<PortPlan>
  readonly passthroughMode: Mode
  /** Ports no inbound port declares but a PeerAuthentication sets a mode for: their own passthrough. */
  readonly passthroughPorts: ReadonlyArray<{ readonly port: number; readonly mode: Mode }>
  readonly jwt?: HttpFilter
  readonly httpRbac: ReadonlyArray<HttpFilter>
  readonly networkRbac: ReadonlyArray<Listener_Filter>
  readonly detectionTimeoutMs: number
  readonly tproxy: boolean
  /** `PILOT_HTTP10`: auto ports' HTTP chains take HTTP/1.0 too. */
  readonly http10: boolean
}

interface Planned {
  readonly plan: Plan
  readonly key: string
  readonly warnings: ReadonlyArray<GeneratorNotice>
}

const notice = (scope: string, message: string): GeneratorNotice => ({ level: "warning", scope, message })

const plan = (push: PushContext, proxy: ProxyView): Planned => {
  const ports = inboundPorts(push, proxy)
  const warnings: Array<GeneratorNotice> = ports.warnings.map((m) => notice("model", m))
  const portPlans = ports.ports.map((port): PortPlan => {
    const mode = modeOf(workloadMtlsMode(push, proxy.namespace, proxy.labels, port.port))
    const name = chainNameOf(port, proxy)
    if (port.tls === undefined) return { port, mode, name }
    const origin = port.origin ?? `port ${port.port}`
    // As the reference: the workload's own TLS only where the mesh's mTLS is off for the port.
    if (mode !== "DISABLE") {
      warnings.push(
        notice(
          "model",
          `${origin} field tls: applies only where a PeerAuthentication sets mTLS DISABLE on port ${port.port} (it is ${mode}); the mesh's mTLS applies`,
        ),
      )
      return { port, mode, name }
    }
    const socket = ingressTlsSocket(port.tls)
    if (typeof socket !== "string") return { port, mode, name, socket }
    warnings.push(notice("model", `${origin} field tls: ${socket}; the port is served without TLS`))
    return { port, mode, name }
  })
  const ras = applicableRequestAuthentications(push, proxy)
  const jwt = jwtFilter(
    ras.resources,
    (host, port) =>
      proxyScope(push, proxy).services.some((s) => s.hostname === host && s.ports.some((p) => p.port === port)),
    push.input.jwks ?? proxyFetchedJwks,
  )
  const authz = authzFilters(push, proxy, jwt.issuers)
  for (const m of [...ras.warnings, ...jwt.warnings]) warnings.push(notice("authn", m))
  for (const m of authz.warnings) warnings.push(notice("authorization", m))
  const body: Plan = {
    ports: portPlans,
    passthroughMode: modeOf(workloadMtlsMode(push, proxy.namespace, proxy.labels, undefined)),
    passthroughPorts: workloadMtlsPorts(push, proxy.namespace, proxy.labels)
      .filter((port) => !ports.ports.some((p) => p.port === port))
      .map((port) => ({ port, mode: modeOf(workloadMtlsMode(push, proxy.namespace, proxy.labels, port)) })),
    ...(jwt.filter !== undefined ? { jwt: jwt.filter } : {}),
    httpRbac: authz.http,
    networkRbac: authz.network,
    detectionTimeoutMs: push.options.proxy.protocolDetectionTimeoutMs,
    tproxy: proxy.interceptionMode === "TPROXY",
    http10: push.options.proxy.http10,
  }
  return { plan: body, key: `inbound|${digest(JSON.stringify(body))}`, warnings }
}

const plans: LocalSlot<Map<string, Planned>, PushContext> = { make: () => new Map() }

/** The plan of a workload, shared by its replicas within a push. */
const plannedFor = (push: PushContext, proxy: ProxyView): Planned => {
  const byKey = push.local(plans)
  const ports = inboundPorts(push, proxy)
  // Sidecar ingress chains are named by the proxy's address: not shared between replicas.
  const address = ports.ports.some((p) => p.sidecarIngress !== undefined) ? (unicastAddress(proxy) ?? "") : ""
  const key = `${proxy.scopeKey}|${ports.key}|${address}`
  let planned = byKey.get(key)
  if (planned === undefined) {
    planned = plan(push, proxy)
    byKey.set(key, planned)
  }
  return planned
}

// ---------------------------------------------------------------------------------------------
// Filters

const router: HttpFilter = { name: Filter.router, typed_config: typed(TypedConfig.router, {}) }

interface HttpTarget {
  readonly statPrefix: string
  readonly routeName: string
  readonly virtualHost: string
  readonly cluster: string
  readonly operation?: string
}

const hcm = (target: HttpTarget, plan: Plan): Listener_Filter => ({
  name: Filter.httpConnectionManager,
  typed_config: typed(TypedConfig.httpConnectionManager, {
    stat_prefix: target.statPrefix,
    codec_type: "AUTO",
    route_config: {
      name: target.routeName,
      validate_clusters: { value: false },
      virtual_hosts: [
        {
          name: target.virtualHost,
          domains: ["*"],
          routes: [
            {
              name: "default",
              match: { prefix: "/" },
              route: {
                cluster: target.cluster,
                timeout: ZERO,
                max_stream_duration: { max_stream_duration: ZERO, grpc_timeout_header_max: ZERO },
              },
              ...(target.operation !== undefined ? { decorator: { operation: target.operation } } : {}),
            },
          ],
        },
      ],
    },
    http_filters: [...(plan.jwt !== undefined ? [plan.jwt] : []), ...plan.httpRbac, router],
    forward_client_cert_details: "APPEND_FORWARD",
    set_current_client_cert_details: { subject: { value: true }, dns: true, uri: true },
    use_remote_address: { value: false },
    normalize_path: { value: true },
    path_with_escaped_slashes_action: "KEEP_UNCHANGED",
    upgrade_configs: [{ upgrade_type: "websocket" }],
    stream_idle_timeout: ZERO,
  }),
})

const tcp = (cluster: string, plan: Plan): ReadonlyArray<Listener_Filter> => [
  ...plan.networkRbac,
  { name: Filter.tcpProxy, typed_config: typed(TypedConfig.tcpProxy, { stat_prefix: cluster, cluster }) },
]

interface Match {
  readonly port?: number | undefined
  readonly transport?: "tls" | "raw_buffer"
  readonly alpn?: ReadonlyArray<string>
}

const chain = (
  name: string,
  match: Match,
  filters: ReadonlyArray<Listener_Filter>,
  socket?: TransportSocket,
): FilterChain => ({
  name,
  filter_chain_match: {
    ...(match.port !== undefined ? { destination_port: { value: match.port } } : {}),
    ...(match.transport !== undefined ? { transport_protocol: match.transport } : {}),
    ...(match.alpn !== undefined ? { application_protocols: match.alpn } : {}),
  },
  filters,
  ...(socket !== undefined ? { transport_socket: socket } : {}),
})

/**
 * The chains of one port (or, without a port, the passthrough): `http`/`tcp` are the filters
 * the HTTP and TCP chains end in, `name(protocol)` their names.
 */
const securedChains = (
  klass: ProtocolClass,
  mode: Mode,
  port: number | undefined,
  name: (protocol: ChainOption["protocol"]) => string,
  http: () => ReadonlyArray<Listener_Filter>,
  tcpFilters: () => ReadonlyArray<Listener_Filter>,
  http10: boolean,
): ReadonlyArray<FilterChain> =>
  chainOptions(klass, mode, http10).map((o) =>
    chain(
      name(o.protocol),
      { port, transport: o.transport, ...(o.alpn !== undefined ? { alpn: o.alpn } : {}) },
      o.protocol === "http" ? http() : tcpFilters(),
      o.mtls ? meshMtlsSocket(o.protocol) : undefined,
    ),
  )

const portChains = (p: PortPlan, plan: Plan): ReadonlyArray<FilterChain> => {
  const { port } = p
  const base = p.name
  const http = () => [
    hcm(
      {
        statPrefix: `inbound_${base}`,
        routeName: port.cluster,
        virtualHost: `inbound|http|${port.port}`,
        cluster: port.cluster,
        ...(port.service !== undefined ? { operation: `${port.service.host}:${port.service.port}/*` } : {}),
      },
      plan,
    ),
  ]
  const tcpFilters = () => tcp(port.cluster, plan)
  if (p.socket !== undefined) {
    // The workload's own TLS (Sidecar ingress, mTLS DISABLE): every connection to the port must use it.
    return [
      chain(
        base,
        { port: port.port, transport: "tls" },
        port.protocolClass === "http" ? http() : tcpFilters(),
        p.socket,
      ),
    ]
  }
  return securedChains(port.protocolClass, p.mode, port.port, () => base, http, tcpFilters, plan.http10)
}

/**
 * The passthrough chains: for every port the workload-wide mode, and before them, for each port a
 * PeerAuthentication names that no inbound port declares, that port's own mode.
 */
const passthroughChains = (plan: Plan): ReadonlyArray<FilterChain> => {
  const cluster = INBOUND_PASSTHROUGH_CLUSTER
  const http = () => [hcm({ statPrefix: cluster, routeName: cluster, virtualHost: "inbound|http|0", cluster }, plan)]
  // The reference's fixed names: HTTP chains the catch-all, TCP ones the listener's name.
  const name = (protocol: ChainOption["protocol"]) =>
    protocol === "http" ? `${VIRTUAL_INBOUND_LISTENER}-catchall-http` : VIRTUAL_INBOUND_LISTENER
  const tcpFilters = () => tcp(cluster, plan)
  return [
    ...securedChains("auto", plan.passthroughMode, undefined, name, http, tcpFilters, plan.http10),
    ...plan.passthroughPorts.flatMap((p) => securedChains("auto", p.mode, p.port, name, http, tcpFilters, plan.http10)),
  ]
}

const listener = (plan: Plan): Listener => {
  // The reference's order (tools listing the chains show them so): black hole, passthrough, ports.
  const filterChains = [
    chain(
      `${VIRTUAL_INBOUND_LISTENER}-blackhole`,
      { port: VIRTUAL_INBOUND_PORT },
      tcp(BLACKHOLE_CLUSTER, { ...plan, networkRbac: [] }),
    ),
    ...passthroughChains(plan),
    ...plan.ports.flatMap((p) => portChains(p, plan)),
  ]
  return {
    name: VIRTUAL_INBOUND_LISTENER,
    address: { socket_address: { address: "0.0.0.0", port_value: VIRTUAL_INBOUND_PORT } },
    traffic_direction: "INBOUND",
    listener_filters: [
      { name: Filter.originalDst, typed_config: typed(TypedConfig.originalDst, {}) },
      ...inspectorFilters(filterChains),
    ],
    listener_filters_timeout: durationMs(plan.detectionTimeoutMs),
    continue_on_listener_filters_timeout: true,
    ...(plan.tproxy ? { transparent: { value: true } } : {}),
    filter_chains: filterChains,
  }
}

/**
 * The sidecar's inbound listener. Its key is the digest of what it is built from (ports, modes,
 * JWT and RBAC filters, options), never the proxy's name or addresses: replicas share it.
 * A proxy without inbound capture (`INTERCEPTION_MODE` NONE) gets none.
 */
export const generateInboundListener = (push: PushContext, proxy: ProxyView): Generated<Listener> => {
  if (proxy.kind !== "sidecar" || proxy.interceptionMode === "NONE") return { resources: [], warnings: [] }
  const planned = plannedFor(push, proxy)
  const resource: ResourceSpec<Listener> = {
    name: VIRTUAL_INBOUND_LISTENER,
    key: planned.key,
    build: () => listener(planned.plan),
  }
  return { resources: [resource], warnings: planned.warnings }
}

/** Instances left without a chain because another protocol took their port (`pilot_conflict_inbound_listener`). */
export const inboundListenerConflicts = (push: PushContext, proxy: ProxyView): number =>
  proxy.kind === "sidecar" ? inboundPorts(push, proxy).conflicts : 0
