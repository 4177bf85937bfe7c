/**
 * Access logs of HTTP connection managers and TCP proxies (the same `AccessLog` message) from the
 * mesh config and the Telemetry API.
 *
 * Without a Telemetry `accessLogging` entry for the direction, the mesh config decides:
 * `accessLogFile` set → one file log in `accessLogEncoding`. With entries, providers merge as the
 * reference merges them (root → namespace → workload, an entry without providers inheriting the
 * previous entry's, the last named set deciding which providers are in scope, `disabled`
 * removing a provider). The mesh's file stands for the default provider, so `disabled: true`
 * turns it off. Named providers come from mesh config `extensionProviders`:
 *
 * - `envoyFileAccessLog`: its path (else /dev/stdout) in its `logFormat` (text, a newline added
 *   when missing, or JSON labels); the built-in `envoy` provider without a format takes the
 *   mesh's encoding, as the reference does;
 * - `envoyHttpAls` on HTTP connection managers and `envoyTcpAls` on TCP proxies: the gRPC access
 *   log service at the provider's registry service;
 * - anything else (unknown names, other kinds, a service the registry lacks): reported, skipped.
 */

import { Either } from "effect"
import {
  type ExtensionProvider,
  type FileAccessLogProvider,
  type ProviderService,
  providerNamed,
} from "../../../mesh-config/extension-providers.js"
import type { GeneratorNotice } from "../../grpcgen/generator-notices.js"
import type { ProxyGenOptions } from "../../model/push-context.js"
import { typed } from "../../protocol/typed-any.js"
import type {
  AccessLog,
  CommonGrpcAccessLogConfig,
  Struct,
  SubstitutionFormatString,
} from "../../protocol/xds-types.js"
import { toStruct } from "../clusters/proto-values.js"
import { envoyGrpcService, type ProviderCluster } from "../provider-cluster.js"
import { TypedConfig } from "../well-known.js"
import type { TelemetryResource } from "./telemetry-selection.js"

export type Direction = "inbound" | "outbound" | "gateway"
export type WorkloadMode = "CLIENT" | "SERVER"

/** The built-in file access log provider. */
export const ENVOY_PROVIDER = "envoy"
export const FILE_ACCESS_LOGGER = "envoy.access_loggers.file"
export const CEL_FILTER = "envoy.access_loggers.extension_filters.cel"
export const CEL_FILTER_TYPE = "type.googleapis.com/envoy.extensions.access_loggers.filters.cel.v3.ExpressionFilter"
export const HTTP_GRPC_ACCESS_LOGGER = "envoy.access_loggers.http_grpc"
export const TCP_GRPC_ACCESS_LOGGER = "envoy.access_loggers.tcp_grpc"
const ALS = "type.googleapis.com/envoy.extensions.access_loggers.grpc.v3"
export const HTTP_GRPC_ACCESS_LOG_TYPE = `${ALS}.HttpGrpcAccessLogConfig`
export const TCP_GRPC_ACCESS_LOG_TYPE = `${ALS}.TcpGrpcAccessLogConfig`
/** The reference's log names when a gRPC provider sets none. */
const HTTP_LOG_NAME = "http_envoy_accesslog"
const TCP_LOG_NAME = "tcp_envoy_accesslog"
const DEV_STDOUT = "/dev/stdout"
/** The mesh config's own file log in the provider merge (no provider can be named so). */
const MESH_FILE = ""

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
const stringStruct = (fields: Readonly<Record<string, string>>): Struct => ({
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

const celFilter = (expression: string | undefined): AccessLog =>
  expression !== undefined
    ? { filter: { extension_filter: { name: CEL_FILTER, typed_config: typed(CEL_FILTER_TYPE, { expression }) } } }
    : {}

const meshLogFormat = (options: ProxyGenOptions): SubstitutionFormatString =>
  options.accessLogEncoding === "JSON"
    ? { json_format: stringStruct(DEFAULT_JSON_FORMAT) }
    : { text_format_source: { inline_string: DEFAULT_TEXT_FORMAT } }

/** The file access log of the mesh config, optionally filtered. */
export const fileAccessLog = (options: ProxyGenOptions, expression?: string): AccessLog => ({
  name: FILE_ACCESS_LOGGER,
  ...celFilter(expression),
  typed_config: typed(TypedConfig.fileAccessLog, {
    path: options.accessLogFile !== "" ? options.accessLogFile : DEV_STDOUT,
    log_format: meshLogFormat(options),
  }),
})

/** The format of a file provider (the built-in `envoy` one without a format: the mesh's encoding). */
const providerLogFormat = (provider: FileAccessLogProvider, options: ProxyGenOptions): SubstitutionFormatString => {
  const format = provider.logFormat
  if (format === undefined) {
    if (provider.name === ENVOY_PROVIDER) return meshLogFormat(options)
    return { text_format_source: { inline_string: DEFAULT_TEXT_FORMAT } }
  }
  if ("text" in format)
    return { text_format_source: { inline_string: format.text.endsWith("\n") ? format.text : `${format.text}\n` } }
  return Object.keys(format.labels).length === 0
    ? { json_format: stringStruct(DEFAULT_JSON_FORMAT) }
    : { json_format: toStruct(format.labels) }
}

const providerFileLog = (
  provider: FileAccessLogProvider,
  options: ProxyGenOptions,
  expression?: string,
): AccessLog => ({
  name: FILE_ACCESS_LOGGER,
  ...celFilter(expression),
  typed_config: typed(TypedConfig.fileAccessLog, {
    path: provider.path !== "" ? provider.path : DEV_STDOUT,
    log_format: providerLogFormat(provider, options),
  }),
})

const commonGrpcConfig = (
  logName: string,
  filterState: ReadonlyArray<string>,
  { hostname, cluster }: ProviderCluster,
): CommonGrpcAccessLogConfig => ({
  log_name: logName,
  grpc_service: envoyGrpcService(cluster, hostname),
  transport_api_version: "V3",
  ...(filterState.length > 0 ? { filter_state_objects_to_log: filterState } : {}),
})

const listed = (
  field:
    | "additional_request_headers_to_log"
    | "additional_response_headers_to_log"
    | "additional_response_trailers_to_log",
  values: ReadonlyArray<string>,
): Readonly<Record<string, ReadonlyArray<string>>> => (values.length > 0 ? { [field]: values } : {})

/** Resolves a provider's registry service to the cluster the proxy reaches it at. */
export type ClusterLookup = (service: ProviderService) => Either.Either<ProviderCluster, string>

interface ProviderState {
  readonly expression?: string
}

/** The entries of one provider for HTTP and TCP, or why it gives none. */
interface ProviderLogs {
  readonly http?: AccessLog
  readonly tcp?: AccessLog
  readonly problem?: string
}

const kindName = (provider: ExtensionProvider): string =>
  provider.kind === "unsupported" || provider.kind === "invalid" ? provider.providerKind : provider.kind

const providerLogs = (
  name: string,
  state: ProviderState,
  options: ProxyGenOptions,
  lookup: ClusterLookup,
): ProviderLogs => {
  if (name === MESH_FILE) {
    const log = fileAccessLog(options, state.expression)
    return { http: log, tcp: log }
  }
  const provider = providerNamed(options.extensionProviders, name)
  if (provider === undefined) return { problem: "no mesh config extension provider has this name" }
  switch (provider.kind) {
    case "envoyFileAccessLog": {
      const log = providerFileLog(provider, options, state.expression)
      return { http: log, tcp: log }
    }
    case "envoyHttpAls":
      return Either.match(lookup(provider), {
        onLeft: (problem) => ({ problem }),
        onRight: (at) => ({
          http: {
            name: HTTP_GRPC_ACCESS_LOGGER,
            ...celFilter(state.expression),
            typed_config: typed(HTTP_GRPC_ACCESS_LOG_TYPE, {
              common_config: commonGrpcConfig(provider.logName || HTTP_LOG_NAME, provider.filterStateObjectsToLog, at),
              ...listed("additional_request_headers_to_log", provider.additionalRequestHeadersToLog),
              ...listed("additional_response_headers_to_log", provider.additionalResponseHeadersToLog),
              ...listed("additional_response_trailers_to_log", provider.additionalResponseTrailersToLog),
            }),
          },
        }),
      })
    case "envoyTcpAls":
      return Either.match(lookup(provider), {
        onLeft: (problem) => ({ problem }),
        onRight: (at) => ({
          tcp: {
            name: TCP_GRPC_ACCESS_LOGGER,
            ...celFilter(state.expression),
            typed_config: typed(TCP_GRPC_ACCESS_LOG_TYPE, {
              common_config: commonGrpcConfig(provider.logName || TCP_LOG_NAME, provider.filterStateObjectsToLog, at),
            }),
          },
        }),
      })
    case "invalid":
      return { problem: `the provider is invalid: ${provider.problems.join("; ")}` }
    default:
      return { problem: `a ${kindName(provider)} provider writes no access log` }
  }
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
  lookup: ClusterLookup,
): {
  /** For HTTP connection managers. */
  readonly accessLog: ReadonlyArray<AccessLog>
  /** For TCP proxies. */
  readonly tcpAccessLog: ReadonlyArray<AccessLog>
  readonly warnings: ReadonlyArray<GeneratorNotice>
} => {
  const entries = telemetries.flatMap((t) =>
    (t.spec.accessLogging ?? [])
      .map((entry, index) => ({ t, entry, index }))
      .filter(({ entry }) => matchesMode(entry.match?.mode, direction)),
  )
  if (entries.length === 0) {
    const logs = options.accessLogFile !== "" ? [fileAccessLog(options)] : []
    return { accessLog: logs, tcpAccessLog: logs, warnings: [] }
  }

  const defaults: ReadonlyArray<string> = options.accessLogFile !== "" ? [MESH_FILE] : []
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

  const accessLog: Array<AccessLog> = []
  const tcpAccessLog: Array<AccessLog> = []
  const warnings: Array<GeneratorNotice> = []
  for (const [provider, state] of [...enabled].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const logs = providerLogs(provider, state, options, lookup)
    if (logs.http !== undefined) accessLog.push(logs.http)
    if (logs.tcp !== undefined) tcpAccessLog.push(logs.tcp)
    if (logs.problem === undefined) continue
    const from = entries.find(({ entry }) => providerNames(entry.providers).includes(provider))
    warnings.push({
      level: "warning",
      scope: "model",
      message: `Telemetry ${from === undefined ? "" : `${from.t.meta.namespace}/${from.t.meta.name} `}field accessLogging[${from?.index ?? 0}].providers: provider ${JSON.stringify(provider)} skipped: ${logs.problem}`,
    })
  }
  return { accessLog, tcpAccessLog, warnings }
}
