/** Telemetry API and mesh logging/tracing options → HCM access logs and tracing. */
export {
  accessLogsFor,
  DEFAULT_JSON_FORMAT,
  DEFAULT_TEXT_FORMAT,
  ENVOY_PROVIDER,
  FILE_ACCESS_LOGGER,
  fileAccessLog,
  matchesMode,
  workloadMode,
} from "./access-log.js"
export { GATEWAY_NAME_LABEL, hasWorkloadTarget, policyAttaches } from "./policy-target.js"
export { type Direction, type TelemetryConfig, telemetryForProxy } from "./telemetry.js"
export { selectTelemetries } from "./telemetry-selection.js"
export { tracingFor } from "./tracing.js"
