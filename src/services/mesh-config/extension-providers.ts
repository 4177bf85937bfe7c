/**
 * Mesh config `extensionProviders` as the proxy generators read them: each raw provider object
 * (`{name, <kind>: {...}}`, kept loose by the schema) parsed once into a discriminated view of
 * the kinds the generators implement, with the reference's field names and checks. A provider
 * of another kind stays as `unsupported` (its name and kind); one whose fields are wrong stays
 * as `invalid` with its problems, so the generator that would use it can say why it cannot.
 * Durations become milliseconds: the options holding these views are compared as JSON.
 */
import { Either } from "effect"
import { parseGoDurationNanos } from "../config/duration.js"

/** The reference's default mesh config providers (the built-in `envoy` file logger among them). */
export const DEFAULT_RAW_EXTENSION_PROVIDERS: ReadonlyArray<{ readonly name: string; readonly [k: string]: unknown }> =
  [
    { name: "prometheus", prometheus: {} },
    { name: "stackdriver", stackdriver: {} },
    { name: "envoy", envoyFileAccessLog: { path: "/dev/stdout" } },
  ]

/** A service of the registry the proxy reaches the provider at (`host` or `namespace/host`). */
export interface ProviderService {
  readonly service: string
  readonly port: number
}

export interface FileAccessLogProvider {
  readonly kind: "envoyFileAccessLog"
  readonly name: string
  /** Empty: /dev/stdout. */
  readonly path: string
  /** Text with command operators, or JSON labels (field → operator or any JSON value). */
  readonly logFormat?: { readonly text: string } | { readonly labels: Readonly<Record<string, unknown>> }
}

export interface HttpGrpcAccessLogProvider extends ProviderService {
  readonly kind: "envoyHttpAls"
  readonly name: string
  readonly logName: string
  readonly filterStateObjectsToLog: ReadonlyArray<string>
  readonly additionalRequestHeadersToLog: ReadonlyArray<string>
  readonly additionalResponseHeadersToLog: ReadonlyArray<string>
  readonly additionalResponseTrailersToLog: ReadonlyArray<string>
}

export interface TcpGrpcAccessLogProvider extends ProviderService {
  readonly kind: "envoyTcpAls"
  readonly name: string
  readonly logName: string
  readonly filterStateObjectsToLog: ReadonlyArray<string>
}

export interface RequestBodySettings {
  readonly maxRequestBytes: number
  readonly allowPartialMessage: boolean
  readonly packAsBytes: boolean
}

interface ExtAuthzCommon extends ProviderService {
  readonly name: string
  /** Undefined: the reference's default (10 minutes). */
  readonly timeoutMs?: number
  readonly failOpen: boolean
  /** An HTTP status code the proxy's StatusCode enum defines. */
  readonly statusOnError?: number
  readonly includeRequestBodyInCheck?: RequestBodySettings
}

export interface ExtAuthzHttpProvider extends ExtAuthzCommon {
  readonly kind: "envoyExtAuthzHttp"
  readonly pathPrefix: string
  readonly includeRequestHeadersInCheck: ReadonlyArray<string>
  readonly includeAdditionalHeadersInCheck: Readonly<Record<string, string>>
  readonly headersToUpstreamOnAllow: ReadonlyArray<string>
  readonly headersToDownstreamOnDeny: ReadonlyArray<string>
  readonly headersToDownstreamOnAllow: ReadonlyArray<string>
}

export interface ExtAuthzGrpcProvider extends ExtAuthzCommon {
  readonly kind: "envoyExtAuthzGrpc"
}

export interface TracingProvider extends ProviderService {
  readonly kind: "zipkin" | "opentelemetry" | "datadog"
  readonly name: string
  /** `maxTagLength`; 0: the proxy's default. */
  readonly maxTagLength: number
  /** Zipkin only: 64-bit trace ids instead of 128-bit. */
  readonly enable64bitTraceId: boolean
}

/** An external SDS server gateways fetch `credentialName: sds://<name>` certificates from. */
export interface SdsProvider extends ProviderService {
  readonly kind: "sds"
  readonly name: string
}

/** A provider of a kind the generators do not implement (prometheus, stackdriver, ...). */
export interface UnsupportedProvider {
  readonly kind: "unsupported"
  readonly name: string
  readonly providerKind: string
}

/** A provider of an implemented kind whose fields the reference would reject. */
export interface InvalidProvider {
  readonly kind: "invalid"
  readonly name: string
  readonly providerKind: string
  readonly problems: ReadonlyArray<string>
}

export type ExtensionProvider =
  | FileAccessLogProvider
  | HttpGrpcAccessLogProvider
  | TcpGrpcAccessLogProvider
  | ExtAuthzHttpProvider
  | ExtAuthzGrpcProvider
  | TracingProvider
  | SdsProvider
  | UnsupportedProvider
  | InvalidProvider

// ---------------------------------------------------------------------------------------------
// Field readers: each reports what is wrong and returns a usable value.

type Raw = Readonly<Record<string, unknown>>
type Report = (problem: string) => void

const isRecord = (value: unknown): value is Raw => typeof value === "object" && value !== null && !Array.isArray(value)

const text = (raw: Raw, field: string, report: Report): string => {
  const value = raw[field]
  if (value === undefined || value === null) return ""
  if (typeof value === "string") return value
  report(`${field} must be a string`)
  return ""
}

const flag = (raw: Raw, field: string, report: Report): boolean => {
  const value = raw[field]
  if (value === undefined || value === null) return false
  if (typeof value === "boolean") return value
  report(`${field} must be true or false`)
  return false
}

/** A non-negative integer; proto JSON may spell unsigned integers as strings. */
const count = (raw: Raw, field: string, report: Report): number => {
  const value = raw[field]
  if (value === undefined || value === null) return 0
  const n = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value
  if (typeof n === "number" && Number.isInteger(n) && n >= 0 && n <= 4294967295) return n
  report(`${field} must be a non-negative integer`)
  return 0
}

const strings = (raw: Raw, field: string, report: Report): ReadonlyArray<string> => {
  const value = raw[field]
  if (value === undefined || value === null) return []
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) return value
  report(`${field} must be a list of strings`)
  return []
}

const stringMap = (raw: Raw, field: string, report: Report): Readonly<Record<string, string>> => {
  const value = raw[field]
  if (value === undefined || value === null) return {}
  if (isRecord(value) && Object.values(value).every((v) => typeof v === "string"))
    return value as Record<string, string>
  report(`${field} must be a map of strings`)
  return {}
}

const service = (raw: Raw, report: Report): ProviderService => {
  const name = text(raw, "service", report)
  if (name === "") report("service must be set")
  const port = count(raw, "port", report)
  if (port < 1 || port > 65535) report(`port must be in the range [1, 65535], found: ${port}`)
  return { service: name, port }
}

/** Milliseconds of a duration (`0.5s`, `1m`); undefined when absent. */
const millis = (raw: Raw, field: string, report: Report): number | undefined => {
  const value = raw[field]
  if (value === undefined || value === null) return undefined
  const parsed = typeof value === "string" ? parseGoDurationNanos(value) : Either.left("not a string")
  if (Either.isLeft(parsed) || parsed.right < 0n) {
    report(`${field} must be a duration such as "10s"`)
    return undefined
  }
  return Number(parsed.right / 1_000_000n)
}

/** The HTTP status codes the proxy's `envoy.type.v3.StatusCode` enum defines. */
export const ENVOY_STATUS_CODES: Readonly<Record<number, string>> = {
  100: "Continue",
  200: "OK",
  201: "Created",
  202: "Accepted",
  203: "NonAuthoritativeInformation",
  204: "NoContent",
  205: "ResetContent",
  206: "PartialContent",
  207: "MultiStatus",
  208: "AlreadyReported",
  226: "IMUsed",
  300: "MultipleChoices",
  301: "MovedPermanently",
  302: "Found",
  303: "SeeOther",
  304: "NotModified",
  305: "UseProxy",
  307: "TemporaryRedirect",
  308: "PermanentRedirect",
  400: "BadRequest",
  401: "Unauthorized",
  402: "PaymentRequired",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  406: "NotAcceptable",
  407: "ProxyAuthenticationRequired",
  408: "RequestTimeout",
  409: "Conflict",
  410: "Gone",
  411: "LengthRequired",
  412: "PreconditionFailed",
  413: "PayloadTooLarge",
  414: "URITooLong",
  415: "UnsupportedMediaType",
  416: "RangeNotSatisfiable",
  417: "ExpectationFailed",
  421: "MisdirectedRequest",
  422: "UnprocessableEntity",
  423: "Locked",
  424: "FailedDependency",
  426: "UpgradeRequired",
  428: "PreconditionRequired",
  429: "TooManyRequests",
  431: "RequestHeaderFieldsTooLarge",
  500: "InternalServerError",
  501: "NotImplemented",
  502: "BadGateway",
  503: "ServiceUnavailable",
  504: "GatewayTimeout",
  505: "HTTPVersionNotSupported",
  506: "VariantAlsoNegotiates",
  507: "InsufficientStorage",
  508: "LoopDetected",
  510: "NotExtended",
  511: "NetworkAuthenticationRequired",
}

const statusOnError = (raw: Raw, report: Report): number | undefined => {
  const value = text(raw, "statusOnError", report)
  if (value === "") return undefined
  const code = /^\d+$/.test(value) ? Number(value) : Number.NaN
  if (ENVOY_STATUS_CODES[code] !== undefined) return code
  report(`unsupported statusOnError ${value}: not an HTTP status code the proxy knows`)
  return undefined
}

const requestBody = (raw: Raw, report: Report): RequestBodySettings | undefined => {
  const value = raw.includeRequestBodyInCheck
  if (value === undefined || value === null) return undefined
  if (!isRecord(value)) {
    report("includeRequestBodyInCheck must be an object")
    return undefined
  }
  const nested: Report = (p) => report(`includeRequestBodyInCheck.${p}`)
  const maxRequestBytes = count(value, "maxRequestBytes", nested)
  // The proxy requires a positive buffer size (validate.rules gt 0).
  if (maxRequestBytes === 0) report("includeRequestBodyInCheck.maxRequestBytes must be greater than 0")
  return {
    maxRequestBytes,
    allowPartialMessage: flag(value, "allowPartialMessage", nested),
    packAsBytes: flag(value, "packAsBytes", nested),
  }
}

/** Header patterns are exact, `prefix*` or `*suffix`; a lone `*` is not a pattern the reference takes. */
const headerPatterns = (raw: Raw, field: string, report: Report): ReadonlyArray<string> => {
  const values = strings(raw, field, report)
  if (values.includes("*"))
    report(`${field}: a single wildcard ("*") is not supported, change it to either prefix or suffix match`)
  return values
}

// ---------------------------------------------------------------------------------------------
// Kinds

const extAuthzCommon = (name: string, raw: Raw, report: Report): ExtAuthzCommon => {
  const timeoutMs = millis(raw, "timeout", report)
  const status = statusOnError(raw, report)
  const body = requestBody(raw, report)
  return {
    name,
    ...service(raw, report),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    failOpen: flag(raw, "failOpen", report),
    ...(status !== undefined ? { statusOnError: status } : {}),
    ...(body !== undefined ? { includeRequestBodyInCheck: body } : {}),
  }
}

const parsers: Readonly<Record<string, (name: string, raw: Raw, report: Report) => ExtensionProvider>> = {
  envoyFileAccessLog: (name, raw, report) => {
    const format = raw.logFormat
    let logFormat: FileAccessLogProvider["logFormat"]
    if (isRecord(format)) {
      if (typeof format.text === "string" && format.text !== "") logFormat = { text: format.text }
      else if (isRecord(format.labels)) logFormat = { labels: format.labels }
      else if (format.text !== undefined || format.labels !== undefined)
        report("logFormat must set text (a string) or labels (a map)")
    } else if (format !== undefined && format !== null) report("logFormat must be an object")
    return {
      kind: "envoyFileAccessLog",
      name,
      path: text(raw, "path", report),
      ...(logFormat !== undefined ? { logFormat } : {}),
    }
  },
  envoyHttpAls: (name, raw, report) => ({
    kind: "envoyHttpAls",
    name,
    ...service(raw, report),
    logName: text(raw, "logName", report),
    filterStateObjectsToLog: strings(raw, "filterStateObjectsToLog", report),
    additionalRequestHeadersToLog: strings(raw, "additionalRequestHeadersToLog", report),
    additionalResponseHeadersToLog: strings(raw, "additionalResponseHeadersToLog", report),
    additionalResponseTrailersToLog: strings(raw, "additionalResponseTrailersToLog", report),
  }),
  envoyTcpAls: (name, raw, report) => ({
    kind: "envoyTcpAls",
    name,
    ...service(raw, report),
    logName: text(raw, "logName", report),
    filterStateObjectsToLog: strings(raw, "filterStateObjectsToLog", report),
  }),
  envoyExtAuthzHttp: (name, raw, report) => {
    const pathPrefix = text(raw, "pathPrefix", report)
    if (pathPrefix !== "" && !pathPrefix.startsWith("/"))
      report(`pathPrefix must begin with "/", found: ${JSON.stringify(pathPrefix)}`)
    const requestHeaders = headerPatterns(raw, "includeRequestHeadersInCheck", report)
    return {
      kind: "envoyExtAuthzHttp",
      ...extAuthzCommon(name, raw, report),
      pathPrefix,
      // The deprecated field counts only when its successor is not set, as in the reference.
      includeRequestHeadersInCheck:
        requestHeaders.length > 0 ? requestHeaders : headerPatterns(raw, "includeHeadersInCheck", report),
      includeAdditionalHeadersInCheck: stringMap(raw, "includeAdditionalHeadersInCheck", report),
      headersToUpstreamOnAllow: headerPatterns(raw, "headersToUpstreamOnAllow", report),
      headersToDownstreamOnDeny: headerPatterns(raw, "headersToDownstreamOnDeny", report),
      headersToDownstreamOnAllow: headerPatterns(raw, "headersToDownstreamOnAllow", report),
    }
  },
  envoyExtAuthzGrpc: (name, raw, report) => ({ kind: "envoyExtAuthzGrpc", ...extAuthzCommon(name, raw, report) }),
  zipkin: (name, raw, report) => tracing("zipkin", name, raw, report),
  opentelemetry: (name, raw, report) => tracing("opentelemetry", name, raw, report),
  datadog: (name, raw, report) => tracing("datadog", name, raw, report),
  sds: (name, raw, report) => ({ kind: "sds", name, ...service(raw, report) }),
}

const tracing = (kind: TracingProvider["kind"], name: string, raw: Raw, report: Report): TracingProvider => ({
  kind,
  name,
  ...service(raw, report),
  maxTagLength: count(raw, "maxTagLength", report),
  enable64bitTraceId: kind === "zipkin" ? flag(raw, "enable64bitTraceId", report) : false,
})

/** The kinds the generators implement. */
export const IMPLEMENTED_PROVIDER_KINDS: ReadonlyArray<string> = Object.keys(parsers)

/** One raw provider (`{name, <kind>: {...}}`) as its typed view. */
export const parseExtensionProvider = (raw: {
  readonly name: string
  readonly [k: string]: unknown
}): ExtensionProvider => {
  const name = typeof raw.name === "string" ? raw.name : ""
  const kinds = Object.keys(raw).filter((k) => k !== "name")
  if (kinds.length !== 1)
    return {
      kind: "invalid",
      name,
      providerKind: kinds.join(","),
      problems: [
        kinds.length === 0 ? "no provider kind is set" : `more than one provider kind is set: ${kinds.join(", ")}`,
      ],
    }
  const providerKind = kinds[0]!
  const parse = parsers[providerKind]
  if (parse === undefined) return { kind: "unsupported", name, providerKind }
  const body = raw[providerKind]
  const problems: Array<string> = []
  const parsed = parse(name, isRecord(body) ? body : {}, (p) => problems.push(p))
  if (!isRecord(body) && body !== undefined && body !== null) problems.unshift(`${providerKind} must be an object`)
  return problems.length === 0 ? parsed : { kind: "invalid", name, providerKind, problems }
}

/** Every provider of the mesh config, in its order. */
export const parseExtensionProviders = (
  raw: ReadonlyArray<{ readonly name: string; readonly [k: string]: unknown }>,
): ReadonlyArray<ExtensionProvider> => raw.map(parseExtensionProvider)

/** The typed view of the reference's default providers. */
export const defaultExtensionProviders: ReadonlyArray<ExtensionProvider> = parseExtensionProviders(
  DEFAULT_RAW_EXTENSION_PROVIDERS,
)

/** A provider by name (the mesh config's names are unique); undefined when none has it. */
export const providerNamed = (
  providers: ReadonlyArray<ExtensionProvider>,
  name: string,
): ExtensionProvider | undefined => providers.find((p) => p.name === name)
