/**
 * GRPCRoute rules → VirtualService HTTP routes (gRPC is HTTP/2 with `/<service>/<method>`
 * paths): a method match with service and method → `uri.exact /<service>/<method>`, service only
 * → `uri.prefix /<service>/`, method only or a RegularExpression match → `uri.regex` with the
 * missing part any one segment; header matches as HTTPRoute's. Filters: header modifiers and
 * mirrors. Ranked with HTTPRoute matches (the same host may carry both).
 */
import type { ConfigResource } from "../config-model/resource.js"
import type { GRPCRouteMatch, GRPCRouteSpec } from "../config-model/schemas/gateway-api/types.js"
import type { BackendContext } from "./backends.js"
import type { Problem } from "./conditions.js"
import { GRPC_ROUTE_FILTERS, translateFilters } from "./filters.js"
import { type ConvertedHttpRoutes, type HttpEntry, matchRank, valueMatches } from "./http-routes.js"
import { keyOf } from "./model.js"
import { type MatchRest, type PathMatch, routesForMatch, ruleAction } from "./rule-actions.js"

const ANY_SEGMENT = "[^/]+"

const escapeRegex = (value: string): string => value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const pathOf = (match: GRPCRouteMatch): PathMatch => {
  const method = match.method
  if (method === undefined || (method.service === undefined && method.method === undefined)) return { type: "Any" }
  if (method.type === "RegularExpression")
    return { type: "Regex", value: `/${method.service ?? ANY_SEGMENT}/${method.method ?? ANY_SEGMENT}` }
  if (method.service !== undefined && method.method !== undefined)
    return { type: "Exact", value: `/${method.service}/${method.method}` }
  if (method.service !== undefined) return { type: "Prefix", value: `/${method.service}/` }
  return { type: "Regex", value: `/${ANY_SEGMENT}/${escapeRegex(method.method ?? "")}` }
}

const restOf = (match: GRPCRouteMatch): MatchRest => {
  const headers = valueMatches(match.headers, true)
  return headers !== undefined ? { headers } : {}
}

export const convertGrpcRoute = (
  route: ConfigResource<GRPCRouteSpec>,
  backends: BackendContext,
): ConvertedHttpRoutes => {
  const entries: Array<HttpEntry> = []
  const refProblems: Array<Problem> = []
  const unsupported: Array<Problem> = []
  const rules = route.spec.rules !== undefined && route.spec.rules.length > 0 ? route.spec.rules : [{}]
  rules.forEach((rule, ruleIndex) => {
    const filters = translateFilters(rule.filters, GRPC_ROUTE_FILTERS, backends)
    const action = ruleAction(
      { filters, ...(rule.backendRefs !== undefined ? { backendRefs: rule.backendRefs } : {}) },
      backends,
    )
    refProblems.push(...action.refProblems)
    unsupported.push(...action.unsupported)
    const name = `${route.meta.namespace}.${route.meta.name}.${ruleIndex}`
    const matches = rule.matches !== undefined && rule.matches.length > 0 ? rule.matches : [{}]
    matches.forEach((match, matchIndex) => {
      const path = pathOf(match)
      const rest = restOf(match)
      entries.push({
        rank: matchRank(path, rest),
        origin: {
          creationTimestamp: route.meta.creationTimestamp ?? "",
          route: keyOf(route),
          kind: "GRPCRoute",
          rule: ruleIndex,
          match: matchIndex,
        },
        routes: routesForMatch(action, name, path, rest),
      })
    })
  })
  return { entries, refProblems, unsupported }
}
