/**
 * Names and type URLs the proxy (sidecar and gateway) generators share: the reference's listener
 * and cluster names a proxy, its agent and `meshctl proxy-config` recognise, the filter names
 * and the typed-config type URLs.
 */

/** The port the capture rules send outbound traffic to, and its listener. */
export const VIRTUAL_OUTBOUND_PORT = 15001
export const VIRTUAL_OUTBOUND_LISTENER = "virtualOutbound"
/** The port the capture rules send inbound traffic to, and its listener. */
export const VIRTUAL_INBOUND_PORT = 15006
export const VIRTUAL_INBOUND_LISTENER = "virtualInbound"

/** Clusters every sidecar has. */
export const PASSTHROUGH_CLUSTER = "PassthroughCluster"
export const BLACKHOLE_CLUSTER = "BlackHoleCluster"
/** The inbound passthrough (original destination, either address family), the reference's name. */
export const INBOUND_PASSTHROUGH_CLUSTER = "InboundPassthroughCluster"
/** The agent's SDS server, declared in the bootstrap (static cluster). */
export const SDS_CLUSTER = "sds-grpc"
/** The SDS resource names the agent serves: the workload certificate and the mesh root. */
export const SDS_DEFAULT = "default"
export const SDS_ROOT = "ROOTCA"
/** Gateway credentials by SDS name are `kubernetes://<secret>` in the reference; kept as is. */
export const SDS_CREDENTIAL_PREFIX = "kubernetes://"

/** `outbound|port|subset|host` / `inbound|port||` cluster names. */
export const outboundClusterName = (host: string, port: number, subset = ""): string =>
  `outbound|${port}|${subset}|${host}`
export const inboundClusterName = (port: number, host = ""): string => `inbound|${port}||${host}`

/** The name of an outbound listener for a service address and port (`0.0.0.0_80`, `10.0.0.1_3306`). */
export const listenerName = (address: string, port: number): string => `${address}_${port}`

/** ALPN the mesh's mTLS carries (the reference's spelling, which peers check). */
export const MESH_ALPN_HTTP = ["istio-http/1.0", "istio-http/1.1", "istio-h2"] as const
export const MESH_ALPN_TCP = ["istio-peer-exchange", "istio"] as const

/** Filter names. */
export const Filter = {
  httpConnectionManager: "envoy.filters.network.http_connection_manager",
  tcpProxy: "envoy.filters.network.tcp_proxy",
  networkRbac: "envoy.filters.network.rbac",
  originalDst: "envoy.filters.listener.original_dst",
  tlsInspector: "envoy.filters.listener.tls_inspector",
  httpInspector: "envoy.filters.listener.http_inspector",
  router: "envoy.filters.http.router",
  fault: "envoy.filters.http.fault",
  cors: "envoy.filters.http.cors",
  rbac: "envoy.filters.http.rbac",
  jwt: "envoy.filters.http.jwt_authn",
  alpn: "istio.alpn",
  wasmPrefix: "extensions.mesh.io/wasmplugin/",
} as const

const T = "type.googleapis.com/"
/** Type URLs of the typed configs the generators write. */
export const TypedConfig = {
  httpConnectionManager: `${T}envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager`,
  tcpProxy: `${T}envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy`,
  networkRbac: `${T}envoy.extensions.filters.network.rbac.v3.RBAC`,
  originalDst: `${T}envoy.extensions.filters.listener.original_dst.v3.OriginalDst`,
  tlsInspector: `${T}envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector`,
  httpInspector: `${T}envoy.extensions.filters.listener.http_inspector.v3.HttpInspector`,
  router: `${T}envoy.extensions.filters.http.router.v3.Router`,
  fault: `${T}envoy.extensions.filters.http.fault.v3.HTTPFault`,
  cors: `${T}envoy.extensions.filters.http.cors.v3.Cors`,
  corsPolicy: `${T}envoy.extensions.filters.http.cors.v3.CorsPolicy`,
  rbac: `${T}envoy.extensions.filters.http.rbac.v3.RBAC`,
  jwt: `${T}envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication`,
  wasmHttp: `${T}envoy.extensions.filters.http.wasm.v3.Wasm`,
  wasmNetwork: `${T}envoy.extensions.filters.network.wasm.v3.Wasm`,
  upstreamTls: `${T}envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext`,
  downstreamTls: `${T}envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext`,
  secret: `${T}envoy.extensions.transport_sockets.tls.v3.Secret`,
  fileAccessLog: `${T}envoy.extensions.access_loggers.file.v3.FileAccessLog`,
  httpProtocolOptions: `${T}envoy.extensions.upstreams.http.v3.HttpProtocolOptions`,
  typedExtensionConfig: `${T}envoy.config.core.v3.TypedExtensionConfig`,
} as const

/** The extension-config (ECDS) and name-table (NDS) resource types. */
export const ExtensionConfigType = `${T}envoy.config.core.v3.TypedExtensionConfig`
export const NameTableType = `${T}mesh.networking.nds.v1.NameTable`
/** The reference's spelling of the NDS type, accepted from agents that ask for it. */
export const NameTableTypeAlias = `${T}istio.networking.nds.v1.NameTable`
