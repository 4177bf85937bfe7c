/**
 * The order of HTTP and gRPC route matches within one host, the Gateway API's precedence: an
 * exact path first, then path prefixes, then regular expressions (where the Gateway API leaves
 * regular expressions to the implementation, they come after prefixes as in the reference), each
 * kind the longest first (a prefix counted without its trailing slash); then a method match;
 * then the most header matches; then the most query parameter matches; ties go to the oldest
 * route (creationTimestamp), then `namespace/name`, then rule and match order. VirtualService
 * routes are first-match, so the generated routes are sorted by it.
 */
import { compareStrings } from "./model.js"

/** How specific a match's path is: lower ranks come first. */
export const PathRank = { Exact: 0, Prefix: 1, Regex: 2, Any: 3 } as const

export interface MatchRank {
  readonly path: (typeof PathRank)[keyof typeof PathRank]
  /** The length of the exact path or prefix (longer first). */
  readonly pathLength: number
  readonly method: boolean
  readonly headers: number
  readonly queryParams: number
}

/** Where a match comes from, for the tie-breaks. */
export interface MatchOrigin {
  readonly creationTimestamp: string
  /** `namespace/name` of the route. */
  readonly route: string
  readonly kind: string
  readonly rule: number
  readonly match: number
}

export interface Ranked {
  readonly rank: MatchRank
  readonly origin: MatchOrigin
}

export const compareRanked = (a: Ranked, b: Ranked): number => {
  const ra = a.rank
  const rb = b.rank
  if (ra.path !== rb.path) return ra.path - rb.path
  if (ra.pathLength !== rb.pathLength) return rb.pathLength - ra.pathLength
  if (ra.method !== rb.method) return ra.method ? -1 : 1
  if (ra.headers !== rb.headers) return rb.headers - ra.headers
  if (ra.queryParams !== rb.queryParams) return rb.queryParams - ra.queryParams
  const oa = a.origin
  const ob = b.origin
  return (
    compareStrings(oa.creationTimestamp, ob.creationTimestamp) ||
    compareStrings(oa.route, ob.route) ||
    compareStrings(oa.kind, ob.kind) ||
    oa.rule - ob.rule ||
    oa.match - ob.match
  )
}
