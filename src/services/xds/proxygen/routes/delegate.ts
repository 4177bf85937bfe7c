/**
 * Delegate VirtualServices (the reference's "VirtualService chaining"): a root VirtualService's
 * http route with `delegate: {name, namespace}` is replaced by the delegate's http routes, each
 * matching only what both the root route and the delegate route match (AND), and inheriting the
 * root route's actions the delegate route leaves unset. One level only: a delegate's own
 * `delegate` routes are dropped. A delegate route whose match contradicts every root match is
 * dropped too (the request could never reach it).
 */
import type { HTTPRoute } from "../../../config-model/schemas/virtual-service.js"

export type HttpMatch = NonNullable<HTTPRoute["match"]>[number]
type StringMatch = NonNullable<HttpMatch["uri"]>

const nonEmpty = (value: string | undefined): value is string => value !== undefined && value !== ""

/** Whether a delegate's string match can never hold together with the root's (the reference's rules). */
export const stringMatchConflict = (root: StringMatch | undefined, leaf: StringMatch | undefined): boolean => {
  if (root === undefined || leaf === undefined) return false
  const rootAny = nonEmpty(root.regex) || nonEmpty(root.prefix) || nonEmpty(root.exact)
  const leafAny = nonEmpty(leaf.regex) || nonEmpty(leaf.prefix) || nonEmpty(leaf.exact)
  // A regex cannot be compared with anything: only one side may have a match then.
  if (nonEmpty(root.regex) && leafAny) return true
  if (nonEmpty(leaf.regex) && rootAny) return true
  if (nonEmpty(root.exact)) {
    if (nonEmpty(leaf.prefix) && !root.exact.startsWith(leaf.prefix)) return true
    if (nonEmpty(leaf.exact) && root.exact !== leaf.exact) return true
  }
  if (nonEmpty(root.prefix)) {
    if (nonEmpty(leaf.prefix) && !leaf.prefix.startsWith(root.prefix)) return true
    if (nonEmpty(leaf.exact) && !leaf.exact.startsWith(root.prefix)) return true
  }
  return false
}

const recordConflict = (
  root: Readonly<Record<string, StringMatch>> | undefined,
  leaf: Readonly<Record<string, StringMatch>> | undefined,
): boolean => Object.entries(leaf ?? {}).some(([key, value]) => stringMatchConflict(root?.[key], value))

/** Whether a delegate route's match contradicts a root route's match. */
export const matchConflict = (root: HttpMatch, leaf: HttpMatch): boolean => {
  for (const field of ["uri", "scheme", "method", "authority"] as const)
    if (stringMatchConflict(root[field], leaf[field])) return true
  if (recordConflict(root.headers, leaf.headers)) return true
  if (recordConflict(root.withoutHeaders, leaf.withoutHeaders)) return true
  if (recordConflict(root.queryParams, leaf.queryParams)) return true
  if ((root.ignoreUriCase ?? false) !== (leaf.ignoreUriCase ?? false)) return true
  if ((root.port ?? 0) > 0 && (leaf.port ?? 0) > 0 && root.port !== leaf.port) return true
  if (nonEmpty(root.sourceNamespace) && leaf.sourceNamespace !== root.sourceNamespace) return true
  for (const [key, value] of Object.entries(leaf.sourceLabels ?? {})) {
    const rootValue = root.sourceLabels?.[key]
    if (rootValue !== undefined && rootValue !== value) return true
  }
  const rootGateways = root.gateways ?? []
  const leafGateways = leaf.gateways ?? []
  if (rootGateways.length > 0 && leafGateways.length > 0 && leafGateways.some((g) => !rootGateways.includes(g)))
    return true
  return false
}

const joinedName = (root: string | undefined, leaf: string | undefined): string | undefined =>
  !nonEmpty(leaf) ? root : nonEmpty(root) ? `${root}-${leaf}` : leaf

const mergedRecord = <V>(
  root: Readonly<Record<string, V>> | undefined,
  leaf: Readonly<Record<string, V>> | undefined,
): Readonly<Record<string, V>> | undefined =>
  root === undefined ? leaf : leaf === undefined ? root : { ...root, ...leaf }

/** One root match AND one delegate match: the delegate's conditions win where both set one. */
export const mergeMatch = (root: HttpMatch, leaf: HttpMatch): HttpMatch => {
  const merged: Record<string, unknown> = { ...leaf }
  const name = joinedName(root.name, leaf.name)
  if (name !== undefined) merged.name = name
  for (const field of ["uri", "scheme", "method", "authority", "sourceNamespace"] as const)
    if (leaf[field] === undefined && root[field] !== undefined) merged[field] = root[field]
  for (const field of ["headers", "withoutHeaders", "queryParams", "sourceLabels"] as const) {
    const value = mergedRecord<unknown>(root[field], leaf[field])
    if (value !== undefined) merged[field] = value
  }
  if ((leaf.port ?? 0) === 0 && root.port !== undefined) merged.port = root.port
  if ((leaf.gateways ?? []).length === 0 && root.gateways !== undefined) merged.gateways = root.gateways
  if (root.ignoreUriCase !== undefined && leaf.ignoreUriCase === undefined) merged.ignoreUriCase = root.ignoreUriCase
  return merged as HttpMatch
}

/**
 * The matches of a delegate route under a root route: every delegate match merged with every
 * root match it does not contradict. Undefined when some delegate match fits no root match.
 */
export const mergeMatches = (
  root: ReadonlyArray<HttpMatch>,
  leaf: ReadonlyArray<HttpMatch>,
): ReadonlyArray<HttpMatch> | undefined => {
  if (root.length === 0) return leaf
  if (leaf.length === 0) return root
  const out: Array<HttpMatch> = []
  for (const sub of leaf) {
    const fits = root.filter((r) => !matchConflict(r, sub))
    if (fits.length === 0) return undefined
    for (const r of fits) out.push(mergeMatch(r, sub))
  }
  return out
}

/** The fields a delegate route inherits from its root route when it leaves them unset. */
const INHERITED = [
  "rewrite",
  "directResponse",
  "timeout",
  "retries",
  "fault",
  "mirror",
  "mirrorPercent",
  "mirrorPercentage",
  "corsPolicy",
  "mirrors",
  "headers",
] as const

/** A delegate route under its root route; undefined when their matches contradict each other. */
export const mergeHttpRoute = (root: HTTPRoute, leaf: HTTPRoute): HTTPRoute | undefined => {
  const match = mergeMatches(root.match ?? [], leaf.match ?? [])
  if (match === undefined) return undefined
  const merged: Record<string, unknown> = { ...leaf }
  if (match.length > 0) merged.match = match
  else delete merged.match
  const name = joinedName(root.name, leaf.name)
  if (name !== undefined) merged.name = name
  for (const field of INHERITED) if (leaf[field] === undefined && root[field] !== undefined) merged[field] = root[field]
  return merged as HTTPRoute
}
