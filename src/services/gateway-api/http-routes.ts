/**
 * HTTPRoute rules → VirtualService HTTP routes, one entry per match (ranked for the Gateway-API
 * precedence, see precedence.ts): path Exact → `uri.exact`, PathPrefix → segment-wise prefix
 * (see rule-actions.ts), RegularExpression → `uri.regex`; header and query parameter matches
 * (Exact / RegularExpression; the first of a repeated name counts); method → `method`. A rule
 * without matches matches every path; a route without rules is one such rule.
 */
import type { ConfigResource } from "../config-model/resource.js"
import type {
  HTTPHeaderMatch,
  HTTPQueryParamMatch,
  HTTPRouteMatch,
  HTTPRouteSpec,
} from "../config-model/schemas/gateway-api/types.js"
import type { HTTPRoute as VsHttpRoute } from "../config-model/schemas/virtual-service.js"
import type { BackendContext } from "./backends.js"
import type { Problem } from "./conditions.js"
import { HTTP_ROUTE_FILTERS, translateFilters } from "./filters.js"
import { keyOf } from "./model.js"
import { type MatchRank, PathRank, type Ranked } from "./precedence.js"
import {
  type MatchRest,
  type PathMatch,
  type RuleAction,
  routesForMatch,
  ruleAction,
  segmentPrefix,
} from "./rule-actions.js"

/** One match of one rule: where it ranks and the VirtualService routes it becomes. */
export interface HttpEntry extends Ranked {
  readonly routes: ReadonlyArray<VsHttpRoute>
}

export interface ConvertedHttpRoutes {
  readonly entries: ReadonlyArray<HttpEntry>
  readonly refProblems: ReadonlyArray<Problem>
  readonly unsupported: ReadonlyArray<Problem>
}

type StringMatch = { readonly exact: string } | { readonly regex: string }

/** Header or query parameter matches by name, the first of a repeated name kept. */
export const valueMatches = (
  matches: ReadonlyArray<HTTPHeaderMatch | HTTPQueryParamMatch> | undefined,
  caseInsensitiveNames: boolean,
): Readonly<Record<string, StringMatch>> | undefined => {
  if (matches === undefined || matches.length === 0) return undefined
  const out: Record<string, StringMatch> = {}
  for (const m of matches) {
    const name = caseInsensitiveNames ? m.name.toLowerCase() : m.name
    if (name in out) continue
    out[name] = m.type === "RegularExpression" ? { regex: m.value } : { exact: m.value }
  }
  return out
}

const pathOf = (match: HTTPRouteMatch): PathMatch => {
  const path = match.path
  switch (path?.type) {
    case "Exact":
      return { type: "Exact", value: path.value ?? "/" }
    case "RegularExpression":
      return { type: "Regex", value: path.value ?? ".*" }
    default:
      return { type: "SegmentPrefix", value: segmentPrefix(path?.value) }
  }
}

export const matchRank = (path: PathMatch, rest: MatchRest): MatchRank => ({
  path:
    path.type === "Exact"
      ? PathRank.Exact
      : path.type === "Regex"
        ? PathRank.Regex
        : path.type === "Any"
          ? PathRank.Any
          : PathRank.Prefix,
  pathLength: path.type === "Any" ? 0 : path.value.length,
  method: rest.method !== undefined,
  headers: Object.keys(rest.headers ?? {}).length,
  queryParams: Object.keys(rest.queryParams ?? {}).length,
})

const restOf = (match: HTTPRouteMatch): MatchRest => {
  const headers = valueMatches(match.headers, true)
  const queryParams = valueMatches(match.queryParams, false)
  return {
    ...(headers !== undefined ? { headers } : {}),
    ...(queryParams !== undefined ? { queryParams } : {}),
    ...(match.method !== undefined ? { method: { exact: match.method } } : {}),
  }
}

/**
 * The entries of a route's rules, one per match (HTTPRoute and GRPCRoute alike): each rule's
 * action from its filters and backends (`actionOf`), each match's path and the rest of it.
 */
export const convertRules = <Rule extends { readonly matches?: ReadonlyArray<Match> }, Match>(
  route: ConfigResource<{ readonly rules?: ReadonlyArray<Rule> }>,
  kind: "HTTPRoute" | "GRPCRoute",
  actionOf: (rule: Rule) => RuleAction,
  pathOfMatch: (match: Match | Record<string, never>) => PathMatch,
  restOfMatch: (match: Match | Record<string, never>) => MatchRest,
): ConvertedHttpRoutes => {
  const entries: Array<HttpEntry> = []
  const refProblems: Array<Problem> = []
  const unsupported: Array<Problem> = []
  const rules: ReadonlyArray<Rule | Record<string, never>> =
    route.spec.rules !== undefined && route.spec.rules.length > 0 ? route.spec.rules : [{}]
  rules.forEach((rule, ruleIndex) => {
    const action = actionOf(rule as Rule)
    refProblems.push(...action.refProblems)
    unsupported.push(...action.unsupported)
    const name = `${route.meta.namespace}.${route.meta.name}.${ruleIndex}`
    const ruleMatches = (rule as Rule).matches
    const unmatched = ruleMatches === undefined || ruleMatches.length === 0
    const matches: ReadonlyArray<Match | Record<string, never>> = unmatched ? [{}] : ruleMatches
    matches.forEach((match, matchIndex) => {
      const path = pathOfMatch(match)
      const rest = restOfMatch(match)
      // A rule without matches ranks as the default match (PathPrefix /) but, as the reference
      // writes it, its route has no match at all (a Service parent's port is then the only one).
      entries.push({
        rank: matchRank(path, rest),
        origin: {
          creationTimestamp: route.meta.creationTimestamp ?? "",
          route: keyOf(route),
          kind,
          rule: ruleIndex,
          match: matchIndex,
        },
        routes: routesForMatch(action, name, unmatched ? { type: "Any" } : path, rest),
      })
    })
  })
  return { entries, refProblems, unsupported }
}

export const convertHttpRoute = (route: ConfigResource<HTTPRouteSpec>, backends: BackendContext): ConvertedHttpRoutes =>
  convertRules(
    route,
    "HTTPRoute",
    (rule) =>
      ruleAction(
        {
          filters: translateFilters(rule.filters, HTTP_ROUTE_FILTERS, backends),
          ...(rule.backendRefs !== undefined ? { backendRefs: rule.backendRefs } : {}),
          ...(rule.timeouts !== undefined ? { timeouts: rule.timeouts } : {}),
          ...(rule.retry !== undefined ? { retry: rule.retry } : {}),
        },
        backends,
      ),
    pathOf,
    restOf,
  )
