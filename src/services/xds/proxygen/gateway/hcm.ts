/**
 * The HTTP connection manager of a gateway filter chain, as the reference configures gateways:
 * the gateway is the edge, so it takes the client address from the connection
 * (`use_remote_address`, no trusted hops) and replaces any forwarded client certificate header
 * with what it saw itself (SANITIZE_SET). Routes come over ADS (RDS); the fault and CORS filters
 * are always present because route-level configs refer to them, the router last. Access log,
 * tracing and Wasm filters are added later for every HCM (hcm-decoration.ts).
 */

import { typed } from "../../protocol/typed-any.js"
import type { Listener_Filter } from "../../protocol/xds-types.js"
import { extProcListenerFilter } from "../routes/ext-proc.js"
import { Filter, TypedConfig } from "../well-known.js"

/** `extProc`: a route behind this gateway goes to an InferencePool, whose picker is asked over ext_proc. */
export const httpConnectionManager = (
  statPrefix: string,
  routeConfigName: string,
  http10 = false,
  extProc = false,
): Listener_Filter => ({
  name: Filter.httpConnectionManager,
  typed_config: typed(TypedConfig.httpConnectionManager, {
    codec_type: "AUTO",
    stat_prefix: statPrefix,
    rds: {
      config_source: { ads: {}, initial_fetch_timeout: { seconds: "0", nanos: 0 }, resource_api_version: "V3" },
      route_config_name: routeConfigName,
    },
    http_filters: [
      ...(extProc ? [extProcListenerFilter()] : []),
      { name: Filter.fault, typed_config: typed(TypedConfig.fault, {}) },
      { name: Filter.cors, typed_config: typed(TypedConfig.cors, {}) },
      { name: Filter.router, typed_config: typed(TypedConfig.router, {}) },
    ],
    use_remote_address: { value: true },
    xff_num_trusted_hops: 0,
    forward_client_cert_details: "SANITIZE_SET",
    set_current_client_cert_details: { subject: { value: true }, cert: true, dns: true, uri: true },
    upgrade_configs: [{ upgrade_type: "websocket" }],
    stream_idle_timeout: { seconds: "0", nanos: 0 },
    normalize_path: { value: true },
    path_with_escaped_slashes_action: "KEEP_UNCHANGED",
    http_protocol_options: http10 ? { accept_http_10: true } : {},
  }),
})
