/**
 * The endpoint picker of an InferencePool route (gateway-api/inference-pools.ts): the route asks
 * the picker over ext_proc which pod serves each request. The generated VirtualService names,
 * per HTTP route, the picker's host, port and failure mode; the route gets the per-route ext_proc
 * override (the picker's cluster, headers and full-duplex streamed bodies both ways, as the
 * inference extension's picker needs the OpenAI-style body and its response statistics), and
 * the listener an ext_proc filter that does nothing unless a route overrides it.
 */
import type { EndpointPicker } from "../../../gateway-api/inference-pools.js"
import { typed } from "../../protocol/typed-any.js"
import type { HttpFilter, ProcessingMode_BodySendMode, ProtoAny } from "../../protocol/xds-types.js"
import { outboundClusterName } from "../well-known.js"

export const EXT_PROC_FILTER = "envoy.filters.http.ext_proc"
const T = "type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3."

/**
 * ProcessingMode.BodySendMode FULL_DUPLEX_STREAMED, written as its number: the Envoy API the
 * codec loads (the one @grpc/grpc-js-xds ships) predates the name, and an unknown name would be
 * dropped, while the number goes on the wire as the proxy expects (protobufjs passes numbers
 * through): hence the cast, the one enum value the generated types do not name.
 */
export const FULL_DUPLEX_STREAMED = 4 as unknown as ProcessingMode_BodySendMode

/**
 * The route's `typed_per_filter_config` entry for its picker. The pool's failure mode is not
 * written: the per-route `failure_mode_allow` override is newer than the Envoy API the codec
 * loads (it would be dropped on encoding); the listener filter's own setting (allow) applies.
 */
export const extProcPerRoute = (picker: EndpointPicker): ProtoAny =>
  typed(`${T}ExtProcPerRoute`, {
    overrides: {
      grpc_service: { envoy_grpc: { cluster_name: outboundClusterName(picker.host, picker.port) } },
      processing_mode: {
        request_header_mode: "SEND",
        request_body_mode: FULL_DUPLEX_STREAMED,
        request_trailer_mode: "SEND",
        response_header_mode: "SEND",
        response_body_mode: FULL_DUPLEX_STREAMED,
        response_trailer_mode: "SEND",
      },
    },
  })

/**
 * The listener's ext_proc filter: inert (headers skipped, failures allowed) until a route's
 * override names a picker; the subset metadata namespace is passed both ways so the picker's
 * choice reaches the load balancer.
 */
export const extProcListenerFilter = (): HttpFilter => ({
  name: EXT_PROC_FILTER,
  typed_config: typed(`${T}ExternalProcessor`, {
    grpc_service: { envoy_grpc: { cluster_name: "dummy" }, timeout: { seconds: "10", nanos: 0 } },
    failure_mode_allow: true,
    processing_mode: { request_header_mode: "SKIP", response_header_mode: "SKIP" },
    message_timeout: { seconds: "1000", nanos: 0 },
    metadata_options: {
      receiving_namespaces: { untyped: ["envoy.lb"] },
      forwarding_namespaces: { untyped: ["envoy.lb"] },
    },
  }),
})
