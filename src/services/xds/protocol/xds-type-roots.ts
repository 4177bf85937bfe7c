/**
 * The messages scripts/gen-xds-types.ts writes interfaces for (with every message they reach):
 * the resource types the server serves and every type the generators put in an Any. A type the
 * generators newly wrap in an Any goes here, then the types are regenerated.
 */
import { TypeUrl } from "./type-urls.js"

const fullName = (typeUrl: string): string => typeUrl.slice(typeUrl.lastIndexOf("/") + 1)

/** The served resource types (type-urls.ts). */
export const XDS_RESOURCE_TYPE_NAMES: ReadonlyArray<string> = Object.values(TypeUrl).map(fullName)

/** Types carried in an Any (typed configs, transport sockets, tracers, access loggers, ...). */
export const XDS_ANY_TYPE_NAMES: ReadonlyArray<string> = [
  "envoy.config.trace.v3.DatadogConfig",
  "envoy.config.trace.v3.OpenTelemetryConfig",
  "envoy.config.trace.v3.ZipkinConfig",
  "envoy.extensions.access_loggers.file.v3.FileAccessLog",
  "envoy.extensions.access_loggers.filters.cel.v3.ExpressionFilter",
  "envoy.extensions.access_loggers.grpc.v3.HttpGrpcAccessLogConfig",
  "envoy.extensions.access_loggers.grpc.v3.TcpGrpcAccessLogConfig",
  "envoy.extensions.filters.http.cors.v3.Cors",
  "envoy.extensions.filters.http.cors.v3.CorsPolicy",
  "envoy.extensions.filters.http.ext_authz.v3.ExtAuthz",
  "envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute",
  "envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor",
  "envoy.extensions.filters.http.fault.v3.HTTPFault",
  "envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication",
  "envoy.extensions.filters.http.rbac.v3.RBAC",
  "envoy.extensions.filters.http.router.v3.Router",
  "envoy.extensions.filters.http.wasm.v3.Wasm",
  "envoy.extensions.filters.listener.http_inspector.v3.HttpInspector",
  "envoy.extensions.filters.listener.original_dst.v3.OriginalDst",
  "envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector",
  "envoy.extensions.filters.network.ext_authz.v3.ExtAuthz",
  "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
  "envoy.extensions.filters.network.rbac.v3.RBAC",
  "envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
  "envoy.extensions.filters.network.wasm.v3.Wasm",
  "envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate",
  "envoy.extensions.retry.priority.previous_priorities.v3.PreviousPrioritiesConfig",
  "envoy.extensions.transport_sockets.internal_upstream.v3.InternalUpstreamTransport",
  "envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer",
  "envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext",
  "envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext",
  "envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
  "google.protobuf.StringValue",
]
