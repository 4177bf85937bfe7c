/**
 * GRPCRoute rules → VirtualService HTTP routes (gRPC is HTTP/2 with `/<service>/<method>`
 * paths): a method match with service and method → `uri.exact /<service>/<method>`, service only
 * → `uri.prefix /<service>/`, method only → `uri.regex` with the service any one segment; a
 * RegularExpression match → `uri.regex` with a missing service any one segment and a missing
 * method anything (`.+`), as the reference writes them; header matches as HTTPRoute's. Filters: header modifiers and
 * mirrors. Ranked with HTTPRoute matches (the same host may carry both).
 */
import type { ConfigResource } from "../config-model/resource.js"
import type { GRPCRouteMatch, GRPCRouteSpec } from "../config-model/schemas/gateway-api/types.js"
import type { BackendContext } from "./backends.js"
import { GRPC_ROUTE_FILTERS, translateFilters } from "./filters.js"
import { type ConvertedHttpRoutes, convertRules, valueMatches } from "./http-routes.js"
import { type MatchRest, type PathMatch, ruleAction } from "./rule-actions.js"

const ANY_SEGMENT = "[^/]+"

const escapeRegex = (value: string): string => value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const pathOf = (match: GRPCRouteMatch): PathMatch => {
  const method = match.method
  if (method === undefined || (method.service === undefined && method.method === undefined)) return { type: "Any" }
  if (method.type === "RegularExpression")
    return { type: "Regex", value: `/${method.service ?? ANY_SEGMENT}/${method.method ?? ".+"}` }
  if (method.service !== undefined && method.method !== undefined)
    return { type: "Exact", value: `/${method.service}/${method.method}` }
  if (method.service !== undefined) return { type: "Prefix", value: `/${method.service}/` }
  return { type: "Regex", value: `/${ANY_SEGMENT}/${escapeRegex(method.method ?? "")}` }
}

const restOf = (match: GRPCRouteMatch): MatchRest => {
  const headers = valueMatches(match.headers, true)
  return headers !== undefined ? { headers } : {}
}

export const convertGrpcRoute = (route: ConfigResource<GRPCRouteSpec>, backends: BackendContext): ConvertedHttpRoutes =>
  convertRules(
    route,
    "GRPCRoute",
    (rule) =>
      ruleAction(
        {
          filters: translateFilters(rule.filters, GRPC_ROUTE_FILTERS, backends),
          ...(rule.backendRefs !== undefined ? { backendRefs: rule.backendRefs } : {}),
        },
        backends,
      ),
    pathOf,
    restOf,
  )
