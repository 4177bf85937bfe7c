/**
 * A DestinationRule traffic policy applied to an outbound cluster, the reference's way and order:
 * the upstream protocol (HTTP/2 for gRPC and HTTP2 ports, the downstream's for sniffed ports of
 * sidecars), h2 upgrade, connection pool (circuit breakers always present, with the reference's
 * unlimited defaults), outlier detection, load balancer and locality LB. The cluster is built as
 * a draft: its fields, the common LB config and the upstream HTTP protocol options, assembled at
 * the end (protocol options go into `typed_extension_protocol_options`).
 */
import type { Protocol } from "../../../registry/model.js"
import type { Draft } from "../../protocol/typed-any.js"
import { typed } from "../../protocol/typed-any.js"
import type {
  CircuitBreakers_Thresholds,
  Cluster,
  Cluster_CommonLbConfig,
  Cluster_LbPolicy,
  Cluster_SlowStartConfig,
  Core_HttpProtocolOptions,
  Duration,
  Http2ProtocolOptions,
  OutlierDetection,
  ProtoAny,
  UpstreamHttpProtocolOptions,
} from "../../protocol/xds-types.js"
import { TypedConfig } from "../well-known.js"
import type { ClusterPolicy } from "./destination-rule.js"
import { type LocalityLb, needsLocalityWeightedConfig } from "./locality.js"
import { durationOfMs, MAX_UINT32, positiveDuration, secondsOf } from "./proto-values.js"

export type DiscoveryType = "EDS" | "STATIC" | "STRICT_DNS" | "LOGICAL_DNS" | "ORIGINAL_DST"

/** The upstream HTTP protocol options being assembled. */
export interface HttpOptionsDraft {
  common?: Draft<Core_HttpProtocolOptions>
  upstream?: Draft<UpstreamHttpProtocolOptions>
  /** explicit HTTP/2 (its options object), or the downstream's protocol. */
  protocol?: { readonly kind: "h2"; readonly options: Draft<Http2ProtocolOptions> } | { readonly kind: "downstream" }
}

/** The cluster fields that hold a load balancer's own config. */
export type LbConfigField =
  | "least_request_lb_config"
  | "round_robin_lb_config"
  | "maglev_lb_config"
  | "ring_hash_lb_config"

export interface ClusterDraft {
  readonly name: string
  type: DiscoveryType
  /** Cluster fields other than name, type, lb and protocol options. */
  readonly fields: Draft<Cluster>
  lbPolicy: Cluster_LbPolicy
  lbConfig?: { readonly field: LbConfigField; readonly value: NonNullable<Cluster[LbConfigField]> }
  readonly commonLb: Draft<Cluster_CommonLbConfig>
  readonly http: HttpOptionsDraft
}

export const newDraft = (name: string, type: DiscoveryType, connectTimeoutMs: number): ClusterDraft => ({
  name,
  type,
  fields: { connect_timeout: durationOfMs(connectTimeoutMs) },
  lbPolicy: "ROUND_ROBIN",
  commonLb: {},
  http: {},
})

export const isHttp2Protocol = (protocol: Protocol): boolean =>
  protocol === "HTTP2" || protocol === "GRPC" || protocol === "GRPC-Web"

const setH2 = (draft: ClusterDraft): void => {
  draft.http.protocol = { kind: "h2", options: {} }
}

const useDownstream = (draft: ClusterDraft): void => {
  draft.http.protocol = { kind: "downstream" }
}

/** Whether the cluster speaks explicit HTTP/2 upstream (its TLS then offers `h2`). */
export const isHttp2Cluster = (draft: ClusterDraft): boolean => draft.http.protocol?.kind === "h2"

/** The upstream protocol a service port implies (before the traffic policy). */
export const applyUpstreamProtocol = (draft: ClusterDraft, protocol: Protocol, sidecar: boolean): void => {
  if (isHttp2Protocol(protocol)) setH2(draft)
  // Sniffed ports of sidecars: the upstream speaks what the downstream spoke.
  else if (sidecar && protocol === "UNSUPPORTED") useDownstream(draft)
}

type Pool = NonNullable<ClusterPolicy["connectionPool"]>

/**
 * h2 upgrade: a pool's `h2UpgradePolicy: UPGRADE` forces it (whatever the port's protocol) unless
 * `useClientProtocol`; otherwise the mesh default applies, DO_NOT_UPGRADE.
 */
const applyH2Upgrade = (draft: ClusterDraft, pool: Pool | undefined): void => {
  const http = pool?.http
  if (http?.useClientProtocol !== true && http?.h2UpgradePolicy === "UPGRADE") setH2(draft)
}

const applyConnectionPool = (
  draft: ClusterDraft,
  pool: Pool | undefined,
  retryBudget: ClusterPolicyExtras["retryBudget"],
): void => {
  const threshold: Draft<CircuitBreakers_Thresholds> = {
    max_connections: { value: MAX_UINT32 },
    max_pending_requests: { value: MAX_UINT32 },
    max_requests: { value: MAX_UINT32 },
    max_retries: { value: MAX_UINT32 },
    track_remaining: true,
  }
  if (retryBudget !== undefined) {
    threshold.retry_budget = {
      budget_percent: { value: retryBudget.percent?.value ?? 20 },
      min_retry_concurrency: {
        value: (retryBudget.minRetryConcurrency ?? 0) > 0 ? retryBudget.minRetryConcurrency! : 3,
      },
    }
  }
  const http = pool?.http
  const tcp = pool?.tcp
  let idleTimeout: Duration | undefined
  let maxConnectionDuration: Duration | undefined
  const maxRequestsPerConnection = http?.maxRequestsPerConnection ?? 0
  const maxConcurrentStreams = http?.maxConcurrentStreams ?? 0
  if (http !== undefined) {
    if ((http.http2MaxRequests ?? 0) > 0) threshold.max_requests = { value: http.http2MaxRequests! }
    if ((http.http1MaxPendingRequests ?? 0) > 0)
      threshold.max_pending_requests = { value: http.http1MaxPendingRequests! }
    if ((http.maxRetries ?? 0) > 0) threshold.max_retries = { value: http.maxRetries! }
    idleTimeout = positiveDuration(http.idleTimeout)
  }
  if (tcp !== undefined) {
    const connectTimeout = positiveDuration(tcp.connectTimeout)
    if (connectTimeout !== undefined) draft.fields.connect_timeout = connectTimeout
    if ((tcp.maxConnections ?? 0) > 0) threshold.max_connections = { value: tcp.maxConnections! }
    maxConnectionDuration = positiveDuration(tcp.maxConnectionDuration)
    idleTimeout ??= positiveDuration(tcp.idleTimeout)
    const keepalive = tcp.tcpKeepalive
    if (keepalive !== undefined) {
      // An empty keepalive turns SO_KEEPALIVE on with the system's settings.
      const time = secondsOf(keepalive.time)
      const interval = secondsOf(keepalive.interval)
      draft.fields.upstream_connection_options = {
        tcp_keepalive: {
          ...((keepalive.probes ?? 0) > 0 ? { keepalive_probes: { value: keepalive.probes! } } : {}),
          ...(time !== undefined ? { keepalive_time: { value: time } } : {}),
          ...(interval !== undefined ? { keepalive_interval: { value: interval } } : {}),
        },
      }
    }
  }
  draft.fields.circuit_breakers = { thresholds: [threshold] }
  if (
    idleTimeout !== undefined ||
    maxRequestsPerConnection > 0 ||
    maxConnectionDuration !== undefined ||
    maxConcurrentStreams > 0
  ) {
    const common = draft.http.common ?? {}
    draft.http.common = common
    if (idleTimeout !== undefined) common.idle_timeout = idleTimeout
    if (maxRequestsPerConnection > 0) common.max_requests_per_connection = { value: maxRequestsPerConnection }
    if (maxConnectionDuration !== undefined) common.max_connection_duration = maxConnectionDuration
    if (draft.http.protocol?.kind === "h2" && maxConcurrentStreams > 0)
      draft.http.protocol.options.max_concurrent_streams = { value: maxConcurrentStreams }
  }
  // HTTP/2 PINGs: the proxy requires a timeout for them, so without one nothing is set.
  const keepalive = http?.http2KeepAlive ?? http?.http2ProtocolOptions?.connectionKeepalive
  const pingTimeout = positiveDuration(keepalive?.timeout)
  if (draft.http.protocol?.kind === "h2" && pingTimeout !== undefined) {
    const pingInterval = positiveDuration(keepalive?.interval)
    draft.http.protocol.options.connection_keepalive = {
      timeout: pingTimeout,
      ...(pingInterval !== undefined ? { interval: pingInterval } : {}),
    }
  }
  if (http?.useClientProtocol === true) useDownstream(draft)
}

const applyOutlierDetection = (
  draft: ClusterDraft,
  od: ClusterPolicy["outlierDetection"],
  sendUnhealthy: boolean,
): void => {
  if (od === undefined) return
  const out: Draft<OutlierDetection> = { enforcing_success_rate: { value: 0 } }
  if (od.consecutive5xxErrors !== undefined) {
    out.consecutive_5xx = { value: od.consecutive5xxErrors }
    out.enforcing_consecutive_5xx = { value: od.consecutive5xxErrors > 0 ? 100 : 0 }
  }
  if (od.consecutiveGatewayErrors !== undefined) {
    out.consecutive_gateway_failure = { value: od.consecutiveGatewayErrors }
    out.enforcing_consecutive_gateway_failure = { value: od.consecutiveGatewayErrors > 0 ? 100 : 0 }
  }
  const interval = positiveDuration(od.interval)
  if (interval !== undefined) out.interval = interval
  const baseEjection = positiveDuration(od.baseEjectionTime)
  if (baseEjection !== undefined) out.base_ejection_time = baseEjection
  if ((od.maxEjectionPercent ?? 0) > 0) out.max_ejection_percent = { value: od.maxEjectionPercent! }
  if (od.splitExternalLocalOriginErrors === true) {
    out.split_external_local_origin_errors = true
    if ((od.consecutiveLocalOriginFailures ?? 0) > 0) {
      out.consecutive_local_origin_failure = { value: od.consecutiveLocalOriginFailures! }
      out.enforcing_consecutive_local_origin_failure = { value: 100 }
    }
    out.enforcing_local_origin_success_rate = { value: 0 }
  }
  draft.fields.outlier_detection = out
  // The panic threshold is off unless asked for (few endpoints per service are the rule), and
  // always off when unhealthy endpoints are sent (panic mode would route to them).
  const min = od.minHealthPercent ?? 0
  if (min >= 0) draft.commonLb.healthy_panic_threshold = { value: sendUnhealthy ? 0 : min }
}

type LoadBalancer = NonNullable<ClusterPolicy["loadBalancer"]>

const slowStart = (lb: LoadBalancer | undefined): Cluster_SlowStartConfig | undefined => {
  if (lb?.warmup !== undefined) {
    const window = positiveDuration(lb.warmup.duration)
    return {
      ...(window !== undefined ? { slow_start_window: window } : {}),
      // The runtime key is required by the proto; no runtime overrides it.
      aggression: { default_value: lb.warmup.aggression ?? 1, runtime_key: "upstream.slow_start.aggression" },
      min_weight_percent: { value: lb.warmup.minimumPercent ?? 10 },
    }
  }
  const window = positiveDuration(lb?.warmupDurationSecs)
  return window !== undefined ? { slow_start_window: window } : undefined
}

const applySlowStart = (draft: ClusterDraft, field: LbConfigField, lb: LoadBalancer | undefined): void => {
  const config = slowStart(lb)
  if (config !== undefined) draft.lbConfig = { field, value: { slow_start_config: config } }
}

const applyLoadBalancer = (
  draft: ClusterDraft,
  lb: LoadBalancer | undefined,
  locality: LocalityLb | undefined,
  sendUnhealthy: boolean,
): void => {
  if (sendUnhealthy) draft.commonLb.healthy_panic_threshold = { value: 0 }
  if (needsLocalityWeightedConfig(locality)) draft.commonLb.locality_weighted_lb_config = {}
  if (draft.type === "ORIGINAL_DST") {
    draft.lbPolicy = "CLUSTER_PROVIDED"
    return
  }
  switch (lb?.simple) {
    case "LEAST_CONN":
    case "LEAST_REQUEST":
      draft.lbPolicy = "LEAST_REQUEST"
      applySlowStart(draft, "least_request_lb_config", lb)
      break
    case "RANDOM":
      draft.lbPolicy = "RANDOM"
      break
    case "ROUND_ROBIN":
      draft.lbPolicy = "ROUND_ROBIN"
      applySlowStart(draft, "round_robin_lb_config", lb)
      break
    case "PASSTHROUGH":
      draft.lbPolicy = "CLUSTER_PROVIDED"
      draft.type = "ORIGINAL_DST"
      delete draft.fields.load_assignment
      break
    default:
      // The reference's default balancer.
      draft.lbPolicy = "LEAST_REQUEST"
      applySlowStart(draft, "least_request_lb_config", lb)
  }
  const hash = lb?.consistentHash
  if (hash === undefined) return
  // Only the cluster side here: the hash key (header, cookie, source IP, query parameter) is a
  // route's hash policy.
  if (hash.maglev !== undefined) {
    draft.lbPolicy = "MAGLEV"
    delete draft.lbConfig
    if ((hash.maglev.tableSize ?? 0) !== 0)
      draft.lbConfig = { field: "maglev_lb_config", value: { table_size: { value: String(hash.maglev.tableSize) } } }
  } else if (hash.ringHash !== undefined) {
    draft.lbPolicy = "RING_HASH"
    delete draft.lbConfig
    if ((hash.ringHash.minimumRingSize ?? 0) !== 0)
      draft.lbConfig = {
        field: "ring_hash_lb_config",
        value: { minimum_ring_size: { value: String(hash.ringHash.minimumRingSize) } },
      }
  } else {
    draft.lbPolicy = "RING_HASH"
    draft.lbConfig = {
      field: "ring_hash_lb_config",
      value: { minimum_ring_size: { value: String((hash.minimumRingSize ?? 0) !== 0 ? hash.minimumRingSize : 1024) } },
    }
  }
}

/** Traffic policy fields outside ClusterPolicy that the cluster reads. */
export interface ClusterPolicyExtras {
  readonly retryBudget?: { readonly percent?: { readonly value?: number }; readonly minRetryConcurrency?: number }
}

/** Applies the policy (undefined: defaults only) to an outbound cluster draft. */
export const applyTrafficPolicy = (
  draft: ClusterDraft,
  policy: ClusterPolicy | undefined,
  extras: ClusterPolicyExtras,
  locality: LocalityLb | undefined,
  sendUnhealthy: boolean,
): void => {
  applyH2Upgrade(draft, policy?.connectionPool)
  applyConnectionPool(draft, policy?.connectionPool, extras.retryBudget)
  applyOutlierDetection(draft, policy?.outlierDetection, sendUnhealthy)
  applyLoadBalancer(draft, policy?.loadBalancer, locality, sendUnhealthy)
  if (draft.type === "ORIGINAL_DST") draft.lbPolicy = "CLUSTER_PROVIDED"
}

/** The HttpProtocolOptions typed config, undefined when nothing was set. */
const httpProtocolOptions = (http: HttpOptionsDraft): ProtoAny | undefined => {
  if (http.common === undefined && http.upstream === undefined && http.protocol === undefined) return undefined
  const protocol =
    http.protocol?.kind === "h2"
      ? { explicit_http_config: { http2_protocol_options: http.protocol.options } }
      : http.protocol?.kind === "downstream"
        ? { use_downstream_protocol_config: { http_protocol_options: {}, http2_protocol_options: {} } }
        : // The proto requires a protocol choice: plain HTTP/1.1 when only other options were set.
          { explicit_http_config: { http_protocol_options: {} } }
  return typed(TypedConfig.httpProtocolOptions, {
    ...(http.common !== undefined ? { common_http_protocol_options: http.common } : {}),
    ...(http.upstream !== undefined ? { upstream_http_protocol_options: http.upstream } : {}),
    ...protocol,
  })
}

/** The key of HttpProtocolOptions in `typed_extension_protocol_options`. */
export const HTTP_PROTOCOL_OPTIONS_KEY = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"

/** The Cluster proto of a draft. */
export const assemble = (draft: ClusterDraft): Cluster => {
  const options = httpProtocolOptions(draft.http)
  return {
    name: draft.name,
    type: draft.type,
    ...draft.fields,
    lb_policy: draft.lbPolicy,
    ...(draft.lbConfig !== undefined ? { [draft.lbConfig.field]: draft.lbConfig.value } : {}),
    ...(Object.keys(draft.commonLb).length > 0 ? { common_lb_config: draft.commonLb } : {}),
    ...(options !== undefined ? { typed_extension_protocol_options: { [HTTP_PROTOCOL_OPTIONS_KEY]: options } } : {}),
  }
}
