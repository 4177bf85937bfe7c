/** gateway.networking.k8s.io GRPCRoute: gRPC routing by service and method. */
import { Schema } from "effect"
import { checked, opt, regexProblem } from "../common.js"
import { GRPCRouteFilters } from "./filters.js"
import { HeaderMatches, MAX_RULES, MatchType, ruleNamesProblems, totalMatchesProblem } from "./matches.js"
import { Hostname, listOf, SectionName, Weight } from "./names.js"
import { backendObjectFields, backendPortProblem, ParentRefs } from "./references.js"

const MAX_MATCHES_PER_RULE = 8
const MAX_HOSTNAMES = 16
const MAX_BACKENDS = 16
const MAX_NAME_LENGTH = 1024

/** A fully qualified protobuf service name (`helloworld.Greeter`), optionally with a leading dot. */
const SERVICE_NAME = /^\.?[a-z_][a-z_0-9]*(\.[a-z_][a-z_0-9]*)*$/i
const METHOD_NAME = /^[A-Za-z_][A-Za-z_0-9]*$/

const BoundedName = Schema.String.pipe(
  Schema.filter((v) => (v.length > MAX_NAME_LENGTH ? `must be at most ${MAX_NAME_LENGTH} characters` : undefined)),
)

const GRPCMethodMatch = Schema.Struct({
  type: opt(MatchType),
  service: opt(BoundedName),
  method: opt(BoundedName),
}).pipe(
  checked((match, report) => {
    if (match.service === undefined && match.method === undefined) {
      report([], "one or both of service and method must be set")
    }
    const type = match.type ?? "Exact"
    if (type !== "Exact" && type !== "RegularExpression") return
    const fields = [
      ["service", match.service, SERVICE_NAME],
      ["method", match.method, METHOD_NAME],
    ] as const
    for (const [field, value, exact] of fields) {
      if (value === undefined) continue
      const problem =
        type === "RegularExpression"
          ? regexProblem(value)
          : exact.test(value)
            ? undefined
            : `invalid ${field} name "${value}"`
      if (problem !== undefined) report([field], problem)
    }
  }),
)

const GRPCRouteMatch = Schema.Struct({ method: opt(GRPCMethodMatch), headers: opt(HeaderMatches) })

const GRPCBackendRef = Schema.Struct({
  ...backendObjectFields,
  weight: opt(Weight),
  filters: opt(GRPCRouteFilters),
}).pipe(checked(backendPortProblem))

const GRPCRouteRule = Schema.Struct({
  name: opt(SectionName),
  matches: opt(listOf(GRPCRouteMatch, { max: MAX_MATCHES_PER_RULE })),
  filters: opt(GRPCRouteFilters),
  backendRefs: opt(listOf(GRPCBackendRef, { max: MAX_BACKENDS })),
})

export const GRPCRoute = Schema.Struct({
  parentRefs: opt(ParentRefs),
  hostnames: opt(listOf(Hostname, { max: MAX_HOSTNAMES })),
  rules: opt(
    listOf(GRPCRouteRule, { max: MAX_RULES }).pipe(
      checked((rules, report) => {
        ruleNamesProblems(rules, report)
        totalMatchesProblem(rules, report)
      }),
    ),
  ),
})
