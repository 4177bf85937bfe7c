/**
 * What HTTPRoute and GRPCRoute rules share: header matches, unique rule names and the cap on
 * matches across all rules of a route.
 */
import { Schema } from "effect"
import { checked, Enum, opt, type Report, regexProblem } from "../common.js"
import { uniqueNames } from "./filters.js"
import { HeaderName, HeaderValue, listOf } from "./names.js"

/** At most 16 header or query parameter matches per match. */
export const MAX_HEADER_MATCHES = 16
/** At most 16 rules per route. */
export const MAX_RULES = 16
/** Upstream caps the matches of all rules of one route together at 128. */
const MAX_MATCHES_PER_ROUTE = 128

export const MatchType = Enum("Exact", "RegularExpression")

/** A value matched exactly or by a regular expression, which must then compile (RE2 syntax). */
export const regexValueProblem = (
  match: { readonly type?: "Exact" | "RegularExpression"; readonly value: string },
  report: Report,
) => {
  if (match.type !== "RegularExpression") return
  const problem = regexProblem(match.value)
  if (problem !== undefined) report(["value"], problem)
}

export const HTTPHeaderMatch = Schema.Struct({ type: opt(MatchType), name: HeaderName, value: HeaderValue }).pipe(
  checked(regexValueProblem),
)

export const HeaderMatches = listOf(HTTPHeaderMatch, { max: MAX_HEADER_MATCHES }).pipe(
  checked(uniqueNames("header", true)),
)

/** Rule names, when given, are unique within the route. */
export const ruleNamesProblems = (rules: ReadonlyArray<{ readonly name?: string }>, report: Report) => {
  const seen = new Set<string>()
  rules.forEach((rule, i) => {
    if (rule.name === undefined) return
    if (seen.has(rule.name)) report([i, "name"], `duplicate rule name "${rule.name}"`)
    seen.add(rule.name)
  })
}

/** The matches of all rules together stay within MAX_MATCHES_PER_ROUTE. */
export const totalMatchesProblem = (
  rules: ReadonlyArray<{ readonly matches?: ReadonlyArray<unknown> }>,
  report: Report,
) => {
  const total = rules.reduce((sum, rule) => sum + (rule.matches?.length ?? 0), 0)
  if (total > MAX_MATCHES_PER_ROUTE) {
    report([], `the rules of a route may have at most ${MAX_MATCHES_PER_ROUTE} matches together, got ${total}`)
  }
}
