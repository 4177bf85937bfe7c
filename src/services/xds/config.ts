/**
 * Builds the ADS server configuration from the `discovery` flags and the spec's environment
 * variables (spec 000 §4.3, §4.4); `XdsConfig` is the same inputs as a service.
 */
import { Duration, Either } from "effect"
import { discoveryEnv } from "../config/discovery-env.js"
import { parseGoDuration } from "../config/duration.js"
import type { EnvValues } from "../config/env.js"
import { EnvConfig } from "../config/env-config.js"
import { Ports } from "../constants.js"
import type { ListenAddress } from "../net/address.js"
import { defaultProxyGenOptions, defaultPushContextOptions, type ProxyGenOptions } from "./model/push-context.js"
import type { XdsServerConfig } from "./server.js"

export type XdsEnv = Pick<
  EnvValues<typeof discoveryEnv>,
  | "MESH_DELTA_XDS"
  | "PILOT_DEBOUNCE_AFTER"
  | "PILOT_DEBOUNCE_MAX"
  | "PILOT_ENABLE_EDS_DEBOUNCE"
  | "PILOT_PUSH_THROTTLE"
  | "PILOT_MAX_REQUESTS_PER_SECOND"
  | "PILOT_ENABLE_XDS_CACHE"
  | "PILOT_ENABLE_CDS_CACHE"
  | "PILOT_ENABLE_RDS_CACHE"
  | "PILOT_XDS_CACHE_SIZE"
  | "PILOT_XDS_CACHE_INDEX_CLEAR_INTERVAL"
  | "PILOT_XDS_CACHE_STATS"
  | "PILOT_XDS_SEND_TIMEOUT"
  | "MESH_GPRC_MAXRECVMSGSIZE"
  | "MESH_GPRC_MAXSTREAMS"
  | "MESH_XDS_MAX_STREAM_NAMES"
  | "MESH_XDS_MAX_STREAM_NAME_BYTES"
  | "MESH_XDS_MAX_NAMES"
  | "MESH_XDS_MAX_NAME_BYTES"
  | "MESH_XDS_PLAINTEXT_DEBUG_REMOTE"
  | "PILOT_DRAINING_LABEL"
  | "PILOT_SEND_UNHEALTHY_ENDPOINTS"
  | "PILOT_TRACE_SAMPLING"
  | "PILOT_ENABLE_ROUTE_COLLAPSE_OPTIMIZATION"
  | "ENABLE_AUTO_SNI"
  | "PILOT_ENABLE_ALPN_FILTER"
  | "PILOT_FILTER_GATEWAY_CLUSTER_CONFIG"
  | "PILOT_SCOPE_GATEWAY_TO_NAMESPACE"
  | "PILOT_HTTP10"
>

export interface XdsFlags {
  readonly grpcAddr: ListenAddress
  readonly keepaliveInterval: Duration.Duration
  readonly keepaliveTimeout: Duration.Duration
  readonly keepaliveMaxServerConnectionAge: Duration.Duration
  readonly shutdownDuration: Duration.Duration
  /** --domain */
  readonly domain: string
}

/** The mesh config fields the generators read (defaults: auto mTLS on, `cluster.local`, `mesh-system`). */
export interface XdsMesh {
  readonly enableAutoMtls: boolean
  readonly trustDomain: string
  readonly rootNamespace: string
  /** The mesh config fields only the proxy generators read; their defaults when absent. */
  readonly proxyMesh?: ProxyMesh
}

/** The mesh config fields of `ProxyGenOptions`. */
export type ProxyMesh = Pick<
  ProxyGenOptions,
  | "outboundTrafficPolicy"
  | "defaultServiceExportTo"
  | "defaultVirtualServiceExportTo"
  | "defaultDestinationRuleExportTo"
  | "accessLogFile"
  | "accessLogEncoding"
  | "enableTracing"
  | "connectTimeoutMs"
  | "protocolDetectionTimeoutMs"
  | "extensionProviders"
>

/** The proxy generators' options: the mesh config's fields and the environment's switches. */
export const proxyGenOptions = (env: XdsEnv, mesh: ProxyMesh | undefined): ProxyGenOptions => ({
  ...defaultProxyGenOptions,
  ...(mesh ?? {}),
  traceSampling: Math.max(0, Math.min(100, env.PILOT_TRACE_SAMPLING)),
  enableRouteCollapse: env.PILOT_ENABLE_ROUTE_COLLAPSE_OPTIMIZATION,
  enableAutoSni: env.ENABLE_AUTO_SNI,
  enableAlpnFilter: env.PILOT_ENABLE_ALPN_FILTER,
  filterGatewayClusterConfig: env.PILOT_FILTER_GATEWAY_CLUSTER_CONFIG,
  scopeGatewayToNamespace: env.PILOT_SCOPE_GATEWAY_TO_NAMESPACE,
  http10: env.PILOT_HTTP10,
})

export const xdsServerConfig = (
  flags: XdsFlags,
  env: XdsEnv,
  mesh: XdsMesh = {
    enableAutoMtls: defaultPushContextOptions.enableAutoMtls,
    trustDomain: defaultPushContextOptions.trustDomain,
    rootNamespace: defaultPushContextOptions.rootNamespace,
  },
): XdsServerConfig => ({
  host: flags.grpcAddr.host,
  port: flags.grpcAddr.port,
  keepaliveInterval: flags.keepaliveInterval,
  keepaliveTimeout: flags.keepaliveTimeout,
  maxConnectionAge: flags.keepaliveMaxServerConnectionAge,
  maxRecvMsgSize: env.MESH_GPRC_MAXRECVMSGSIZE,
  maxStreams: env.MESH_GPRC_MAXSTREAMS,
  debounce: {
    debounceAfter: env.PILOT_DEBOUNCE_AFTER,
    debounceMax: env.PILOT_DEBOUNCE_MAX,
    enableEdsDebounce: env.PILOT_ENABLE_EDS_DEBOUNCE,
  },
  pushThrottle: env.PILOT_PUSH_THROTTLE,
  maxRequestsPerSecond: env.PILOT_MAX_REQUESTS_PER_SECOND,
  cache: {
    enabled: env.PILOT_ENABLE_XDS_CACHE,
    maxSize: env.PILOT_XDS_CACHE_SIZE,
    enableCds: env.PILOT_ENABLE_CDS_CACHE,
    enableRds: env.PILOT_ENABLE_RDS_CACHE,
    indexClearInterval: env.PILOT_XDS_CACHE_INDEX_CLEAR_INTERVAL,
    stats: env.PILOT_XDS_CACHE_STATS,
  },
  pushContext: {
    domainSuffix: flags.domain,
    drainingLabel: env.PILOT_DRAINING_LABEL,
    sendUnhealthyEndpoints: env.PILOT_SEND_UNHEALTHY_ENDPOINTS,
    enableAutoMtls: mesh.enableAutoMtls,
    trustDomain: mesh.trustDomain,
    rootNamespace: mesh.rootNamespace,
    proxy: proxyGenOptions(env, mesh.proxyMesh),
  },
  deltaXds: env.MESH_DELTA_XDS,
  shutdownDuration: flags.shutdownDuration,
  sendTimeout: env.PILOT_XDS_SEND_TIMEOUT,
  nameLimits: {
    streamNames: env.MESH_XDS_MAX_STREAM_NAMES,
    streamBytes: env.MESH_XDS_MAX_STREAM_NAME_BYTES,
    totalNames: env.MESH_XDS_MAX_NAMES,
    totalBytes: env.MESH_XDS_MAX_NAME_BYTES,
  },
  plaintextDebugRemote: env.MESH_XDS_PLAINTEXT_DEBUG_REMOTE,
})

/**
 * `XdsConfig`: the push, cache and protocol variables of `discoveryEnv`, the `discovery` flags
 * of the ADS listener and the mesh config fields the generators read; `xdsServerConfigOf` turns
 * it into the ADS server configuration.
 */
export class XdsConfig extends EnvConfig<XdsConfig, XdsFlags & XdsMesh>()("mesh/XdsConfig", {
  table: discoveryEnv,
  names: [
    "MESH_DELTA_XDS",
    "PILOT_DEBOUNCE_AFTER",
    "PILOT_DEBOUNCE_MAX",
    "PILOT_ENABLE_EDS_DEBOUNCE",
    "PILOT_PUSH_THROTTLE",
    "PILOT_MAX_REQUESTS_PER_SECOND",
    "PILOT_ENABLE_XDS_CACHE",
    "PILOT_ENABLE_CDS_CACHE",
    "PILOT_ENABLE_RDS_CACHE",
    "PILOT_XDS_CACHE_SIZE",
    "PILOT_XDS_CACHE_INDEX_CLEAR_INTERVAL",
    "PILOT_XDS_CACHE_STATS",
    "PILOT_XDS_SEND_TIMEOUT",
    "MESH_GPRC_MAXRECVMSGSIZE",
    "MESH_GPRC_MAXSTREAMS",
    "MESH_XDS_MAX_STREAM_NAMES",
    "MESH_XDS_MAX_STREAM_NAME_BYTES",
    "MESH_XDS_MAX_NAMES",
    "MESH_XDS_MAX_NAME_BYTES",
    "MESH_XDS_PLAINTEXT_DEBUG_REMOTE",
    "PILOT_DRAINING_LABEL",
    "PILOT_SEND_UNHEALTHY_ENDPOINTS",
    "PILOT_TRACE_SAMPLING",
    "PILOT_ENABLE_ROUTE_COLLAPSE_OPTIMIZATION",
    "ENABLE_AUTO_SNI",
    "PILOT_ENABLE_ALPN_FILTER",
    "PILOT_FILTER_GATEWAY_CLUSTER_CONFIG",
    "PILOT_SCOPE_GATEWAY_TO_NAMESPACE",
    "PILOT_HTTP10",
  ],
  // The defaults of the `discovery` flags and of the mesh config.
  fields: {
    grpcAddr: { host: undefined, port: Ports.xdsPlaintext },
    keepaliveInterval: Duration.seconds(30),
    keepaliveTimeout: Duration.seconds(10),
    keepaliveMaxServerConnectionAge: Either.getOrThrow(parseGoDuration("2562047h47m16.854775807s")),
    shutdownDuration: Duration.seconds(10),
    domain: "cluster.local",
    enableAutoMtls: defaultPushContextOptions.enableAutoMtls,
    trustDomain: defaultPushContextOptions.trustDomain,
    rootNamespace: defaultPushContextOptions.rootNamespace,
  },
}) {}

/** The ADS server configuration of an `XdsConfig`. */
export const xdsServerConfigOf = (config: typeof XdsConfig.Service): XdsServerConfig =>
  xdsServerConfig(config, config, config)
