/**
 * Access logs of an HTTP connection manager (or TCP proxy: same `AccessLog` message) from the
 * mesh config and the Telemetry API.
 *
 * Without a Telemetry `accessLogging` entry for the direction, the mesh config decides:
 * `accessLogFile` set → one file log in `accessLogEncoding`. With entries, providers merge as the
 * reference merges them (root → namespace → workload, an entry without providers inheriting the
 * previous entry's, the last named set deciding which providers are in scope, `disabled`
 * removing a provider). The one provider known here is the built-in `envoy` file logger (the
 * reference's default mesh config defines it): the mesh's `accessLogFile` (else /dev/stdout) in
 * its encoding. The mesh's file also stands for the default provider, so `disabled: true` turns
 * it off. Other provider names live in mesh config `extensionProviders`, which the PushContext
 * does not carry: reported and skipped.
 */

import type { ProtoObject } from "../../cache/resource-spec.js"
import type { GeneratorNotice } from "../../grpcgen/generator-notices.js"
import type { ProxyGenOptions } from "../../model/push-context.js"
import { TypedConfig } from "../well-known.js"
import type { TelemetryResource } from "./telemetry-selection.js"

export type Direction = "inbound" | "outbound" | "gateway"
export type WorkloadMode = "CLIENT" | "SERVER"

/** The built-in file access log provider. */
export const ENVOY_PROVIDER = "envoy"
export const FILE_ACCESS_LOGGER = "envoy.access_loggers.file"
export const CEL_FILTER = "envoy.access_loggers.extension_filters.cel"
export const CEL_FILTER_TYPE = "type.googleapis.com/envoy.extensions.access_loggers.filters.cel.v3.ExpressionFilter"
const DEV_STDOUT = "/dev/stdout"

/** The reference's default text format (its 1.9+ format, with the termination details). */
export const DEFAULT_TEXT_FORMAT =
  '[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" ' +
  "%RESPONSE_CODE% %RESPONSE_FLAGS% %RESPONSE_CODE_DETAILS% %CONNECTION_TERMINATION_DETAILS% " +
  '"%UPSTREAM_TRANSPORT_FAILURE_REASON%" %BYTES_RECEIVED% %BYTES_SENT% %DURATION% ' +
  '%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" ' +
  '"%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%" %UPSTREAM_CLUSTER_RAW% ' +
  "%UPSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_REMOTE_ADDRESS% " +
  "%REQUESTED_SERVER_NAME% %ROUTE_NAME%\n"

/** The reference's default JSON format: field → command operator. */
export const DEFAULT_JSON_FORMAT: Readonly<Record<string, string>> = {
  start_time: "%START_TIME%",
  route_name: "%ROUTE_NAME%",
  method: "%REQ(:METHOD)%",
  path: "%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%",
  protocol: "%PROTOCOL%",
  response_code: "%RESPONSE_CODE%",
  response_flags: "%RESPONSE_FLAGS%",
  response_code_details: "%RESPONSE_CODE_DETAILS%",
  connection_termination_details: "%CONNECTION_TERMINATION_DETAILS%",
  bytes_received: "%BYTES_RECEIVED%",
  bytes_sent: "%BYTES_SENT%",
  duration: "%DURATION%",
  upstream_service_time: "%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%",
  x_forwarded_for: "%REQ(X-FORWARDED-FOR)%",
  user_agent: "%REQ(USER-AGENT)%",
  request_id: "%REQ(X-REQUEST-ID)%",
  authority: "%REQ(:AUTHORITY)%",
  upstream_host: "%UPSTREAM_HOST%",
  upstream_cluster: "%UPSTREAM_CLUSTER_RAW%",
  upstream_local_address: "%UPSTREAM_LOCAL_ADDRESS%",
  downstream_local_address: "%DOWNSTREAM_LOCAL_ADDRESS%",
  downstream_remote_address: "%DOWNSTREAM_REMOTE_ADDRESS%",
  requested_server_name: "%REQUESTED_SERVER_NAME%",
  upstream_transport_failure_reason: "%UPSTREAM_TRANSPORT_FAILURE_REASON%",
}

/** google.protobuf.Struct in proto-loader's object form (the field names protobufjs defines). */
const stringStruct = (fields: Readonly<Record<string, string>>): ProtoObject => ({
  fields: Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, { stringValue: v }])),
})

/** The listener side a direction is for, as the Telemetry API's `match.mode` names it. */
export const workloadMode = (direction: Direction): WorkloadMode => (direction === "inbound" ? "SERVER" : "CLIENT")

/**
 * Whether a selector's mode covers a direction. Gateways count as clients for the Telemetry API
 * (the reference's rule for access logs, tracing and metrics).
 */
export const matchesMode = (mode: string | undefined, direction: Direction): boolean =>
  mode === undefined || mode === "CLIENT_AND_SERVER" || mode === workloadMode(direction)

/** The file access log of the mesh config (or the `envoy` provider), optionally filtered. */
export const fileAccessLog = (options: ProxyGenOptions, expression?: string): ProtoObject => ({
  name: FILE_ACCESS_LOGGER,
  ...(expression !== undefined
    ? {
        filter: {
          extension_filter: { name: CEL_FILTER, typed_config: { "@type": CEL_FILTER_TYPE, expression } },
        },
      }
    : {}),
  typed_config: {
    "@type": TypedConfig.fileAccessLog,
    path: options.accessLogFile !== "" ? options.accessLogFile : DEV_STDOUT,
    log_format:
      options.accessLogEncoding === "JSON"
        ? { json_format: stringStruct(DEFAULT_JSON_FORMAT) }
        : { text_format_source: { inline_string: DEFAULT_TEXT_FORMAT } },
  },
})

interface ProviderState {
  readonly expression?: string
}

const providerNames = (providers: ReadonlyArray<{ readonly name: string }> | undefined): ReadonlyArray<string> =>
  (providers ?? []).map((p) => p.name).filter((n) => n !== "")

/**
 * The access log entries for one direction of a proxy, from its Telemetries (least specific
 * first), and what could not be applied.
 */
export const accessLogsFor = (
  telemetries: ReadonlyArray<TelemetryResource>,
  direction: Direction,
  options: ProxyGenOptions,
): { readonly accessLog: ReadonlyArray<ProtoObject>; readonly warnings: ReadonlyArray<GeneratorNotice> } => {
  const entries = telemetries.flatMap((t) =>
    (t.spec.accessLogging ?? [])
      .map((entry, index) => ({ t, entry, index }))
      .filter(({ entry }) => matchesMode(entry.match?.mode, direction)),
  )
  if (entries.length === 0)
    return { accessLog: options.accessLogFile !== "" ? [fileAccessLog(options)] : [], warnings: [] }

  const defaults: ReadonlyArray<string> = options.accessLogFile !== "" ? [ENVOY_PROVIDER] : []
  // The last entry naming providers decides which are in scope (a lower level replacing a
  // higher level's providers drops those).
  let inScope = defaults
  for (const { entry } of entries) {
    const names = providerNames(entry.providers)
    if (names.length > 0) inScope = names
  }
  const filters = new Map<string, string>()
  {
    let names = defaults
    for (const { entry } of entries) {
      const own = providerNames(entry.providers)
      if (own.length > 0) names = own
      const expression = entry.filter?.expression
      if (expression !== undefined && expression.trim() !== "") for (const n of names) filters.set(n, expression)
    }
  }
  const enabled = new Map<string, ProviderState>()
  let parent = defaults
  for (const { entry } of entries) {
    const own = providerNames(entry.providers)
    const names = own.length > 0 ? own : parent
    parent = names
    for (const provider of names) {
      if (!inScope.includes(provider)) continue
      if (entry.disabled === true) enabled.delete(provider)
      else {
        const expression = filters.get(provider)
        enabled.set(provider, expression !== undefined ? { expression } : {})
      }
    }
  }

  const accessLog: Array<ProtoObject> = []
  const warnings: Array<GeneratorNotice> = []
  for (const [provider, state] of [...enabled].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (provider === ENVOY_PROVIDER) {
      accessLog.push(fileAccessLog(options, state.expression))
      continue
    }
    const from = entries.find(({ entry }) => providerNames(entry.providers).includes(provider))
    warnings.push({
      level: "warning",
      scope: "model",
      message: `Telemetry ${from === undefined ? "" : `${from.t.meta.namespace}/${from.t.meta.name} `}field accessLogging[${from?.index ?? 0}].providers: provider ${JSON.stringify(provider)} skipped: only the built-in ${JSON.stringify(ENVOY_PROVIDER)} file provider is known (mesh config extensionProviders are not carried to the generators)`,
    })
  }
  return { accessLog, warnings }
}
