/** gateway.networking.k8s.io HTTPRoute: HTTP routing from Gateway listeners (or Services) to backends. */
import { Schema } from "effect"
import { checked, durationNanos, Enum, opt, type Report, regexProblem } from "../common.js"
import { HTTPRouteFilters, replacesPrefixMatch, uniqueNames } from "./filters.js"
import {
  HeaderMatches,
  MAX_HEADER_MATCHES,
  MAX_RULES,
  MatchType,
  regexValueProblem,
  ruleNamesProblems,
  totalMatchesProblem,
} from "./matches.js"
import { GatewayDuration, HeaderName, Hostname, IntIn, listOf, SectionName, Weight } from "./names.js"
import { backendObjectFields, backendPortProblem, ParentRefs } from "./references.js"

const MAX_MATCHES_PER_RULE = 64
const MAX_HOSTNAMES = 16
const MAX_BACKENDS = 16
const MAX_PATH_LENGTH = 1024

/** Exact and prefix paths are absolute and normalised: no empty, `.` or `..` segments, no encoded `/`, no `#`. */
const pathProblem = (path: string): string | undefined => {
  if (!path.startsWith("/")) return `path "${path}" must start with "/"`
  for (const part of ["//", "/./", "/../", "%2f", "%2F", "#"]) {
    if (path.includes(part)) return `path "${path}" must not contain "${part}"`
  }
  for (const end of ["/..", "/."]) if (path.endsWith(end)) return `path "${path}" must not end with "${end}"`
  return undefined
}

const HTTPPathMatch = Schema.Struct({
  type: opt(Enum("Exact", "PathPrefix", "RegularExpression")),
  value: opt(
    Schema.String.pipe(
      Schema.filter((v) => (v.length > MAX_PATH_LENGTH ? `must be at most ${MAX_PATH_LENGTH} characters` : undefined)),
    ),
  ),
}).pipe(
  checked((match, report) => {
    // Upstream defaults: type PathPrefix, value "/".
    const type = match.type ?? "PathPrefix"
    const value = match.value ?? "/"
    if (type !== "Exact" && type !== "PathPrefix" && type !== "RegularExpression") return
    const problem = type === "RegularExpression" ? regexProblem(value) : pathProblem(value)
    if (problem !== undefined) report(["value"], problem)
  }),
)

const HTTPQueryParamMatch = Schema.Struct({
  type: opt(MatchType),
  name: HeaderName,
  value: Schema.String.pipe(
    Schema.filter((v) =>
      v.length === 0
        ? "value must not be empty"
        : v.length > 1024
          ? "value must be at most 1024 characters"
          : undefined,
    ),
  ),
}).pipe(checked(regexValueProblem))

const HTTPRouteMatch = Schema.Struct({
  path: opt(HTTPPathMatch),
  headers: opt(HeaderMatches),
  queryParams: opt(
    listOf(HTTPQueryParamMatch, { max: MAX_HEADER_MATCHES }).pipe(checked(uniqueNames("query parameter", false))),
  ),
  method: opt(Enum("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH")),
})

const HTTPBackendRef = Schema.Struct({
  ...backendObjectFields,
  weight: opt(Weight),
  filters: opt(HTTPRouteFilters),
}).pipe(checked(backendPortProblem))

const HTTPRouteTimeouts = Schema.Struct({ request: opt(GatewayDuration), backendRequest: opt(GatewayDuration) }).pipe(
  checked((timeouts, report) => {
    if (timeouts.request === undefined || timeouts.backendRequest === undefined) return
    const request = durationNanos(timeouts.request)
    const backend = durationNanos(timeouts.backendRequest)
    if (request._tag === "Left" || backend._tag === "Left") return
    // A request timeout of 0 disables it: any backend timeout fits.
    if (request.right !== 0n && backend.right > request.right) {
      report(["backendRequest"], "backendRequest timeout must not be longer than the request timeout")
    }
  }),
)

const HTTPRouteRetry = Schema.Struct({
  codes: opt(Schema.Array(IntIn(400, 599))),
  attempts: opt(IntIn(0, 2147483647)),
  backoff: opt(GatewayDuration),
})

/** Path replacement by prefix needs exactly one PathPrefix match to know the prefix replaced. */
const prefixReplacementProblems = (rule: typeof HTTPRouteRuleFields.Type, report: Report) => {
  const ruleFilters = rule.filters ?? []
  const backendFilters = (rule.backendRefs ?? []).flatMap((b) => b.filters ?? [])
  if ((rule.backendRefs?.length ?? 0) > 0) {
    ruleFilters.forEach((filter, i) => {
      if (filter.type === "RequestRedirect") {
        report(["filters", i], "a RequestRedirect filter cannot be used together with backendRefs")
      }
    })
  }
  if (![...ruleFilters, ...backendFilters].some(replacesPrefixMatch)) return
  // Upstream defaults: no matches is one PathPrefix "/" match; a match without path matches prefix "/".
  const matches = rule.matches ?? [{}]
  const [only] = matches
  if (matches.length !== 1 || (only?.path?.type ?? "PathPrefix") !== "PathPrefix") {
    report(["matches"], "a ReplacePrefixMatch path modifier needs exactly one match, of type PathPrefix")
  }
}

const HTTPRouteRuleFields = Schema.Struct({
  name: opt(SectionName),
  matches: opt(listOf(HTTPRouteMatch, { max: MAX_MATCHES_PER_RULE })),
  filters: opt(HTTPRouteFilters),
  backendRefs: opt(listOf(HTTPBackendRef, { max: MAX_BACKENDS })),
  timeouts: opt(HTTPRouteTimeouts),
  retry: opt(HTTPRouteRetry),
})

const HTTPRouteRule = HTTPRouteRuleFields.pipe(checked(prefixReplacementProblems))

export const HTTPRoute = Schema.Struct({
  parentRefs: opt(ParentRefs),
  hostnames: opt(listOf(Hostname, { max: MAX_HOSTNAMES })),
  rules: opt(
    listOf(HTTPRouteRule, { max: MAX_RULES }).pipe(
      checked((rules, report) => {
        ruleNamesProblems(rules, report)
        totalMatchesProblem(rules, report)
      }),
    ),
  ),
})
