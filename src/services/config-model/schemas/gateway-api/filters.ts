/**
 * Route filters (HTTPRoute and GRPCRoute): header modifiers, mirror, redirect, rewrite and
 * extension references. A filter's `type` names the one field that configures it: that field
 * must be set and no other filter field may be.
 */
import { Schema } from "effect"
import { checked, Enum, opt, type Report, Struct } from "../common.js"
import {
  Group,
  HeaderName,
  HeaderValue,
  headerNameProblem,
  IntIn,
  Kind,
  listOf,
  ObjectName,
  Port,
  PreciseHostname,
} from "./names.js"
import { BackendObjectReference } from "./references.js"

/** At most 16 filters per rule or backend, 16 headers per modifier list. */
const MAX_FILTERS = 16
const MAX_HEADERS = 16
const MAX_PATH_LENGTH = 1024

/** The field that configures each filter type. */
const FIELD_OF_TYPE = {
  RequestHeaderModifier: "requestHeaderModifier",
  ResponseHeaderModifier: "responseHeaderModifier",
  RequestMirror: "requestMirror",
  RequestRedirect: "requestRedirect",
  URLRewrite: "urlRewrite",
  ExtensionRef: "extensionRef",
  CORS: "cors",
} as const
type FilterType = keyof typeof FIELD_OF_TYPE

/** Names in a header list are unique, compared without case (HTTP header names ignore it). */
export const uniqueNames =
  (what: string, ignoreCase: boolean) => (items: ReadonlyArray<{ readonly name: string }>, report: Report) => {
    const seen = new Set<string>()
    items.forEach((item, i) => {
      const key = ignoreCase ? item.name.toLowerCase() : item.name
      if (seen.has(key)) report([i, "name"], `duplicate ${what} name "${item.name}"`)
      seen.add(key)
    })
  }

const HTTPHeader = Schema.Struct({ name: HeaderName, value: HeaderValue })
const HeaderList = listOf(HTTPHeader, { max: MAX_HEADERS }).pipe(checked(uniqueNames("header", true)))

export const HTTPHeaderFilter = Schema.Struct({
  set: opt(HeaderList),
  add: opt(HeaderList),
  remove: opt(
    listOf(Schema.String, { max: MAX_HEADERS }).pipe(
      checked((names, report) => {
        const seen = new Set<string>()
        names.forEach((name, i) => {
          const problem = headerNameProblem(name)
          if (problem !== undefined) report([i], problem)
          else if (seen.has(name.toLowerCase())) report([i], `duplicate header name "${name}"`)
          seen.add(name.toLowerCase())
        })
      }),
    ),
  ),
})

const PathValue = Schema.String.pipe(
  Schema.filter((v) => (v.length > MAX_PATH_LENGTH ? `must be at most ${MAX_PATH_LENGTH} characters` : undefined)),
)

export const HTTPPathModifier = Schema.Struct({
  type: Enum("ReplaceFullPath", "ReplacePrefixMatch"),
  replaceFullPath: opt(PathValue),
  replacePrefixMatch: opt(PathValue),
}).pipe(
  checked((modifier, report) => {
    if (modifier.type !== "ReplaceFullPath" && modifier.type !== "ReplacePrefixMatch") return
    const wanted = modifier.type === "ReplaceFullPath" ? "replaceFullPath" : "replacePrefixMatch"
    const other = modifier.type === "ReplaceFullPath" ? "replacePrefixMatch" : "replaceFullPath"
    if (modifier[wanted] === undefined) report([wanted], `is required when type is ${modifier.type}`)
    if (modifier[other] !== undefined) report([other], `must not be set when type is ${modifier.type}`)
  }),
)

const REDIRECT_STATUS_CODES: ReadonlyArray<number> = [301, 302, 303, 307, 308]

const RedirectStatusCode = Schema.Number.pipe(
  Schema.filter((code) =>
    REDIRECT_STATUS_CODES.includes(code)
      ? undefined
      : `unsupported redirect status code ${code}; expected one of ${REDIRECT_STATUS_CODES.join(", ")}`,
  ),
)

const HTTPRequestRedirect = Schema.Struct({
  scheme: opt(Enum("http", "https")),
  hostname: opt(PreciseHostname),
  path: opt(HTTPPathModifier),
  port: opt(Port),
  statusCode: opt(RedirectStatusCode),
})

const HTTPURLRewrite = Schema.Struct({ hostname: opt(PreciseHostname), path: opt(HTTPPathModifier) })

const HTTPRequestMirror = Schema.Struct({
  backendRef: BackendObjectReference,
  percent: opt(IntIn(0, 100)),
  fraction: opt(
    Schema.Struct({ numerator: IntIn(0, 2147483647), denominator: opt(IntIn(1, 2147483647)) }).pipe(
      checked((fraction, report) => {
        const denominator = fraction.denominator ?? 100
        if (fraction.numerator > denominator) {
          report(["numerator"], `numerator ${fraction.numerator} must not exceed the denominator ${denominator}`)
        }
      }),
    ),
  ),
}).pipe(
  checked((mirror, report) => {
    if (mirror.percent !== undefined && mirror.fraction !== undefined) {
      report([], "only one of percent or fraction may be set")
    }
  }),
)

const LocalObjectReference = Schema.Struct({ group: Group, kind: Kind, name: ObjectName })

const HTTP_FILTER_TYPES = [
  "RequestHeaderModifier",
  "ResponseHeaderModifier",
  "RequestMirror",
  "RequestRedirect",
  "URLRewrite",
  "ExtensionRef",
  "CORS",
] as const satisfies ReadonlyArray<FilterType>
const GRPC_FILTER_TYPES = [
  "RequestHeaderModifier",
  "ResponseHeaderModifier",
  "RequestMirror",
  "ExtensionRef",
] as const satisfies ReadonlyArray<FilterType>

/**
 * `type` names the field that must be set; the fields of the other `types` must be absent.
 * Also runs on filters whose other fields failed to decode (issues.ts), where `type` may be one
 * not allowed: that is reported by the type's own check.
 */
const filterFieldProblems =
  (types: ReadonlyArray<FilterType>) =>
  (filter: { readonly type: string } & Readonly<Record<string, unknown>>, report: Report) => {
    const type = types.find((t) => t === filter.type)
    if (type === undefined) return
    const wanted = FIELD_OF_TYPE[type]
    if (filter[wanted] === undefined) report([wanted], `is required when type is ${type}`)
    for (const other of types) {
      const field = FIELD_OF_TYPE[other]
      if (field !== wanted && filter[field] !== undefined) {
        report([field], `must not be set when type is ${type} (it configures a ${other} filter)`)
      }
    }
  }

/** Filter types that may appear once per list. */
const SINGLE_USE: ReadonlySet<FilterType> = new Set([
  "RequestHeaderModifier",
  "ResponseHeaderModifier",
  "RequestRedirect",
  "URLRewrite",
  "CORS",
])

const filterListProblems = (filters: ReadonlyArray<{ readonly type: FilterType }>, report: Report) => {
  const seen = new Set<FilterType>()
  filters.forEach((filter, i) => {
    if (SINGLE_USE.has(filter.type) && seen.has(filter.type)) {
      report([i, "type"], `a ${filter.type} filter may appear only once`)
    }
    if (
      (filter.type === "RequestRedirect" && seen.has("URLRewrite")) ||
      (filter.type === "URLRewrite" && seen.has("RequestRedirect"))
    ) {
      report([i, "type"], "RequestRedirect and URLRewrite filters cannot be used together")
    }
    seen.add(filter.type)
  })
}

export const HTTPRouteFilter = Schema.Struct({
  type: Enum(...HTTP_FILTER_TYPES),
  requestHeaderModifier: opt(HTTPHeaderFilter),
  responseHeaderModifier: opt(HTTPHeaderFilter),
  requestMirror: opt(HTTPRequestMirror),
  requestRedirect: opt(HTTPRequestRedirect),
  urlRewrite: opt(HTTPURLRewrite),
  extensionRef: opt(LocalObjectReference),
  /** Experimental upstream; kept opaque: only its presence is checked. */
  cors: opt(Struct),
}).pipe(checked(filterFieldProblems(HTTP_FILTER_TYPES)))

/** GRPCRoute filters: no redirect, rewrite or CORS (such fields are not GRPCRoute's and are ignored). */
const GRPCRouteFilter = Schema.Struct({
  type: Enum(...GRPC_FILTER_TYPES),
  requestHeaderModifier: opt(HTTPHeaderFilter),
  responseHeaderModifier: opt(HTTPHeaderFilter),
  requestMirror: opt(HTTPRequestMirror),
  extensionRef: opt(LocalObjectReference),
}).pipe(checked(filterFieldProblems(GRPC_FILTER_TYPES)))

export const HTTPRouteFilters = listOf(HTTPRouteFilter, { max: MAX_FILTERS }).pipe(checked(filterListProblems))
export const GRPCRouteFilters = listOf(GRPCRouteFilter, { max: MAX_FILTERS }).pipe(checked(filterListProblems))

/** Whether a filter rewrites or redirects by replacing the matched path prefix. */
export const replacesPrefixMatch = (filter: typeof HTTPRouteFilter.Type): boolean =>
  (filter.type === "RequestRedirect" && filter.requestRedirect?.path?.type === "ReplacePrefixMatch") ||
  (filter.type === "URLRewrite" && filter.urlRewrite?.path?.type === "ReplacePrefixMatch")
