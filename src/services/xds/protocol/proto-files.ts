/**
 * The Envoy API files the xDS server's codec loads (their imports come along), as plain data:
 * the codec (layers/xds/protos.ts) reads them, and the EnvoyFilter step asks which types they
 * define, since a patch may bring in a typed config of any other Envoy type, which the codec
 * could not encode (envoy-filter/proto-types.ts).
 */
export const XDS_API_PROTO_FILES: ReadonlyArray<string> = [
  "envoy/service/discovery/v3/ads.proto",
  "envoy/config/listener/v3/listener.proto",
  "envoy/config/route/v3/route.proto",
  "envoy/config/cluster/v3/cluster.proto",
  "envoy/config/endpoint/v3/endpoint.proto",
  "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto",
  "envoy/extensions/filters/http/router/v3/router.proto",
  "envoy/extensions/filters/http/fault/v3/fault.proto",
  "envoy/extensions/filters/http/rbac/v3/rbac.proto",
  "envoy/extensions/transport_sockets/tls/v3/tls.proto",
  // What the proxy (sidecar and gateway) generators write inside listeners and clusters: every
  // Any's type must be known here, or it could not be encoded.
  "envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto",
  "envoy/extensions/filters/network/rbac/v3/rbac.proto",
  "envoy/extensions/filters/network/sni_cluster/v3/sni_cluster.proto",
  "envoy/extensions/filters/listener/original_dst/v3/original_dst.proto",
  "envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.proto",
  "envoy/extensions/filters/listener/http_inspector/v3/http_inspector.proto",
  "envoy/extensions/filters/http/cors/v3/cors.proto",
  "envoy/extensions/retry/host/previous_hosts/v3/previous_hosts.proto",
  "envoy/extensions/retry/priority/previous_priorities/v3/previous_priorities_config.proto",
  "envoy/extensions/filters/http/jwt_authn/v3/config.proto",
  "envoy/extensions/filters/http/wasm/v3/wasm.proto",
  "envoy/extensions/filters/http/ext_authz/v3/ext_authz.proto",
  // InferencePool routes ask their endpoint picker over ext_proc (routes/ext-proc.ts).
  "envoy/extensions/filters/http/ext_proc/v3/ext_proc.proto",
  "envoy/extensions/filters/network/ext_authz/v3/ext_authz.proto",
  "envoy/extensions/access_loggers/grpc/v3/als.proto",
  "envoy/config/trace/v3/zipkin.proto",
  "envoy/config/trace/v3/opentelemetry.proto",
  "envoy/config/trace/v3/datadog.proto",
  "envoy/extensions/access_loggers/file/v3/file.proto",
  "envoy/extensions/access_loggers/stream/v3/stream.proto",
  "envoy/extensions/access_loggers/filters/cel/v3/cel.proto",
  "envoy/extensions/transport_sockets/tls/v3/secret.proto",
  "envoy/extensions/filters/network/wasm/v3/wasm.proto",
  "envoy/extensions/upstreams/http/v3/http_protocol_options.proto",
  "envoy/extensions/transport_sockets/raw_buffer/v3/raw_buffer.proto",
  // Waypoints reach their internal listeners through internal upstream connections.
  "envoy/extensions/transport_sockets/internal_upstream/v3/internal_upstream.proto",
  "envoy/config/core/v3/extension.proto",
]
