/** Telemetry API and mesh logging/tracing options → HCM access logs and tracing. */
export {
  accessLogsFor,
  type ClusterLookup,
  DEFAULT_JSON_FORMAT,
  DEFAULT_TEXT_FORMAT,
  ENVOY_PROVIDER,
  FILE_ACCESS_LOGGER,
  fileAccessLog,
  HTTP_GRPC_ACCESS_LOG_TYPE,
  HTTP_GRPC_ACCESS_LOGGER,
  matchesMode,
  TCP_GRPC_ACCESS_LOG_TYPE,
  TCP_GRPC_ACCESS_LOGGER,
  workloadMode,
} from "./access-log.js"
export { GATEWAY_NAME_LABEL, hasWorkloadTarget, policyAttaches } from "./policy-target.js"
export { type Direction, type TelemetryConfig, telemetryForProxy } from "./telemetry.js"
export { selectTelemetries } from "./telemetry-selection.js"
export { DATADOG_TRACER, OPENTELEMETRY_TRACER, type TracerContext, tracingFor, ZIPKIN_TRACER } from "./tracing.js"
