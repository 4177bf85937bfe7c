/**
 * What an HTTP or gRPC route rule does, as VirtualService route fields, and the VirtualService
 * routes one of its matches becomes.
 *
 * - Forwarding: the backends with a weight (percentages summing to 100), per-backend header
 *   changes, mirrors, timeout and retries. A rule that cannot forward as written (no backends,
 *   only zero weights, an unsupported filter, a malformed backend, every weighted backend
 *   invalid) answers 500. When only some weighted backends cannot be resolved (missing, not
 *   permitted, unsupported kind), the Gateway API asks that just the requests that would have
 *   reached them answer 500: their share of the weight becomes an abort fault of that
 *   percentage, and the rest is split among the valid backends in proportion to their weights.
 * - A redirect replaces forwarding (redirect code 302 unless given).
 *
 * A PathPrefix match `/foo` matches whole path segments (`/foo`, `/foo/bar`, not `/foobar`): it
 * becomes two VirtualService matches, `exact: /foo` and `prefix: /foo/`. When the rule replaces
 * the matched prefix (URLRewrite or RequestRedirect ReplacePrefixMatch), the two become separate
 * routes so each rewrites what it matched: `/foo` → `<new>`, `/foo/<rest>` → `<new>/<rest>`. A
 * redirect's prefix replacement of the second is the redirect's `prefixRewrite: <new>/` (the
 * mesh API's field for it, as the reference writes it), never a placeholder in its `uri`.
 */

import { Either } from "effect"
import { durationNanos } from "../config-model/schemas/common.js"
import type { BackendRef, HTTPPathModifier, HTTPRouteRule } from "../config-model/schemas/gateway-api/types.js"
import type { HTTPRoute as VsHttpRoute } from "../config-model/schemas/virtual-service.js"
import { type BackendContext, resolveBackend, weightedDestinations } from "./backends.js"
import type { Problem } from "./conditions.js"
import {
  BACKEND_FILTERS,
  type HeaderChanges,
  type Redirect,
  type Rewrite,
  type RuleFilters,
  translateFilters,
} from "./filters.js"

type Mutable<T> = { -readonly [K in keyof T]: T[K] }
type VsMatch = NonNullable<VsHttpRoute["match"]>[number]
type VsUri = NonNullable<VsMatch["uri"]>

/** The retry conditions a Gateway-API retry adds its status codes to. */
const RETRY_ON_BASE = ["connect-failure", "refused-stream", "unavailable", "cancelled"]
/** Attempts when a retry policy gives none (the mesh's default). */
const DEFAULT_RETRY_ATTEMPTS = 2

export interface RuleAction {
  /** The fields of every VirtualService route of the rule, except name, match and path changes. */
  readonly fields: Readonly<Partial<VsHttpRoute>>
  /** A redirect (its path applied per match), when the rule redirects. */
  readonly redirect?: Redirect
  /** A rewrite (its path applied per match), when the rule forwards and rewrites. */
  readonly rewrite?: Rewrite
  readonly refProblems: ReadonlyArray<Problem>
  readonly unsupported: ReadonlyArray<Problem>
}

const positiveDuration = (value: string | undefined): string | undefined => {
  if (value === undefined) return undefined
  const nanos = durationNanos(value)
  return Either.isRight(nanos) && nanos.right > 0n ? value : undefined
}

const headersField = (headers: HeaderChanges | undefined): Partial<VsHttpRoute> =>
  headers === undefined ? {} : { headers: headers as NonNullable<VsHttpRoute["headers"]> }

/** The rule's header changes and CORS policy, which apply whether it forwards or redirects. */
const ruleWideFields = (filters: RuleFilters): Partial<VsHttpRoute> => ({
  ...headersField(filters.headers),
  ...(filters.cors !== undefined ? { corsPolicy: filters.cors } : {}),
})

const retriesField = (rule: {
  readonly timeouts?: HTTPRouteRule["timeouts"]
  readonly retry?: HTTPRouteRule["retry"]
}): Partial<VsHttpRoute> => {
  const retry = rule.retry
  // Without a retry policy the backend request timeout is the route timeout (`routeTimeout`).
  if (retry === undefined) return {}
  const perTry = positiveDuration(rule.timeouts?.backendRequest)
  const attempts = retry?.attempts ?? DEFAULT_RETRY_ATTEMPTS
  // Zero attempts disables retries; the VirtualService refuses any other retry field with it.
  if (attempts === 0) return { retries: { attempts: 0 } }
  const backoff = positiveDuration(retry.backoff)
  const retryOn = [...RETRY_ON_BASE, ...(retry.codes ?? []).map(String)].join(",")
  return {
    retries: {
      attempts,
      retryOn,
      ...(perTry !== undefined ? { perTryTimeout: perTry } : {}),
      ...(backoff !== undefined ? { backoff } : {}),
    },
  }
}

/**
 * The route timeout: `timeouts.request`; without a retry policy a `backendRequest` timeout
 * bounds the one backend request there is, so it is the route timeout instead (as the
 * reference writes it); with retries it bounds each try (`perTryTimeout`).
 */
const routeTimeout = (rule: {
  readonly timeouts?: HTTPRouteRule["timeouts"]
  readonly retry?: HTTPRouteRule["retry"]
}): string | undefined => {
  const backendRequest = positiveDuration(rule.timeouts?.backendRequest)
  if (rule.retry === undefined && backendRequest !== undefined) return backendRequest
  return positiveDuration(rule.timeouts?.request)
}

const fail = (unsupported: ReadonlyArray<Problem>, refProblems: ReadonlyArray<Problem>): RuleAction => ({
  fields: { directResponse: { status: 500 } },
  refProblems,
  unsupported,
})

/**
 * The percentage of requests (up to 4 decimals) that would have reached unresolvable backends
 * of total weight `unresolved`, beside the valid ones.
 */
const unresolvedShare = (unresolved: number, valid: ReadonlyArray<{ readonly weight: number }>): number => {
  if (unresolved <= 0) return 0
  const total = unresolved + valid.reduce((sum, v) => sum + Math.max(0, v.weight), 0)
  return Math.round((unresolved * 1_000_000) / total) / 10_000
}

export interface RuleInput {
  readonly filters: RuleFilters
  readonly backendRefs?: ReadonlyArray<BackendRef>
  readonly timeouts?: HTTPRouteRule["timeouts"]
  readonly retry?: HTTPRouteRule["retry"]
}

export const ruleAction = (rule: RuleInput, backends: BackendContext): RuleAction => {
  const { filters } = rule
  const refProblems: Array<Problem> = [...filters.refProblems]
  const unsupported: Array<Problem> = [...filters.unsupported]
  if (unsupported.length > 0) return fail(unsupported, refProblems)
  if (filters.redirect !== undefined) {
    return {
      fields: ruleWideFields(filters),
      redirect: filters.redirect,
      refProblems,
      unsupported: [],
    }
  }
  const resolved = (rule.backendRefs ?? []).map((ref) => {
    const backend = resolveBackend(ref, backends)
    if (!backend.ok) return { ...backend, weight: ref.weight ?? 1 }
    const own = translateFilters(ref.filters, BACKEND_FILTERS, backends)
    return { ...backend, headers: own.headers, unsupported: own.unsupported }
  })
  // A malformed backend or one with an unsupported filter fails the whole rule (if it would have
  // had traffic); an unresolvable one fails only its weight share.
  let invalid = false
  let unresolvedWeight = 0
  const valid: Array<{
    destination: { host: string; port?: { number: number } }
    weight: number
    headers?: HeaderChanges
  }> = []
  for (const backend of resolved) {
    if (!backend.ok) {
      refProblems.push(backend.problem)
      if (backend.malformed === true) invalid ||= backend.weight > 0
      else unresolvedWeight += Math.max(0, backend.weight)
    } else if (backend.unsupported.length > 0) {
      unsupported.push(...backend.unsupported)
      invalid ||= backend.weight > 0
    } else
      valid.push({
        destination: backend.destination,
        weight: backend.weight,
        ...(backend.headers !== undefined ? { headers: backend.headers } : {}),
      })
  }
  const destinations = weightedDestinations(valid)
  if (invalid || destinations.length === 0) return fail(unsupported, refProblems)
  const headersOf = new Map(valid.map((v) => [v.destination, v.headers]))
  const route = destinations.map((d) => {
    const headers = headersOf.get(d.destination)
    return {
      destination: d.destination,
      ...(d.weight !== undefined ? { weight: d.weight } : {}),
      ...(headers !== undefined ? { headers: headers as NonNullable<VsHttpRoute["headers"]> } : {}),
    }
  })
  const timeout = routeTimeout(rule)
  const failedShare = unresolvedShare(unresolvedWeight, valid)
  const fields: Mutable<Partial<VsHttpRoute>> = {
    route,
    ...(filters.cors !== undefined ? { corsPolicy: filters.cors } : {}),
    ...(failedShare > 0 ? { fault: { abort: { httpStatus: 500, percentage: { value: failedShare } } } } : {}),
    ...headersField(filters.headers),
    ...(timeout !== undefined ? { timeout } : {}),
    ...retriesField(rule),
    ...(filters.mirrors.length > 0 ? { mirrors: filters.mirrors } : {}),
  }
  return {
    fields,
    ...(filters.rewrite !== undefined ? { rewrite: filters.rewrite } : {}),
    refProblems,
    unsupported: [],
  }
}

/** The path part of one match, as far as path changes need it. */
export type PathMatch =
  | { readonly type: "Exact"; readonly value: string }
  /** A segment prefix, without its trailing slash (`""` for the root). */
  | { readonly type: "SegmentPrefix"; readonly value: string }
  /** A plain string prefix (gRPC `/<service>/`). */
  | { readonly type: "Prefix"; readonly value: string }
  | { readonly type: "Regex"; readonly value: string }
  | { readonly type: "Any" }

/** A PathPrefix value as a segment prefix: the trailing slash does not count (`/foo/` is `/foo`). */
export const segmentPrefix = (value: string | undefined): string => (value ?? "/").replace(/\/+$/, "")

const withoutTrailingSlash = (value: string): string => value.replace(/\/+$/, "")

/** A matched piece of the path and the prefix replacement that applies to it. */
interface PathPiece {
  readonly uri?: VsUri
  /** The replacement for what `uri` matched, when the rule replaces the prefix. */
  readonly prefixTo?: string
}

const isPrefixReplacement = (modifier: HTTPPathModifier | undefined): boolean => modifier?.type === "ReplacePrefixMatch"

/** The pieces of a path match: one route per group, several uris in a group sharing one route. */
const pathGroups = (path: PathMatch, replacement: string | undefined): ReadonlyArray<ReadonlyArray<PathPiece>> => {
  switch (path.type) {
    case "Any":
      return [[{}]]
    case "Exact":
      return [[{ uri: { exact: path.value }, ...(replacement !== undefined ? { prefixTo: replacement } : {}) }]]
    case "Regex":
      return [[{ uri: { regex: path.value }, ...(replacement !== undefined ? { prefixTo: replacement } : {}) }]]
    case "Prefix":
      return [[{ uri: { prefix: path.value }, ...(replacement !== undefined ? { prefixTo: replacement } : {}) }]]
    case "SegmentPrefix": {
      const exact = { exact: path.value === "" ? "/" : path.value }
      const prefix = { prefix: `${path.value}/` }
      if (replacement === undefined)
        return path.value === "" ? [[{ uri: prefix }]] : [[{ uri: exact }, { uri: prefix }]]
      const to = withoutTrailingSlash(replacement)
      return [[{ uri: exact, prefixTo: to === "" ? "/" : to }], [{ uri: prefix, prefixTo: `${to}/` }]]
    }
  }
}

const redirectField = (redirect: Redirect, piece: PathPiece): NonNullable<VsHttpRoute["redirect"]> => {
  const path = redirect.path
  // An exact or regex match replaces the whole path (uri); a prefix match only what it
  // matched (prefixRewrite, the rest of the path kept).
  const uri =
    path?.type === "ReplaceFullPath"
      ? path.replaceFullPath
      : piece.prefixTo !== undefined && piece.uri?.prefix === undefined
        ? piece.prefixTo
        : undefined
  const prefixRewrite = path?.type !== "ReplaceFullPath" && piece.uri?.prefix !== undefined ? piece.prefixTo : undefined
  const port =
    redirect.port !== undefined
      ? { port: redirect.port }
      : redirect.scheme !== undefined
        ? { derivePort: "FROM_PROTOCOL_DEFAULT" as const }
        : uri === undefined && prefixRewrite === undefined && redirect.hostname === undefined
          ? // Nothing else changes: the VirtualService needs one part of the URL to redirect to.
            { derivePort: "FROM_REQUEST_PORT" as const }
          : {}
  return {
    ...(uri !== undefined ? { uri } : {}),
    ...(prefixRewrite !== undefined ? { prefixRewrite } : {}),
    ...(redirect.hostname !== undefined ? { authority: redirect.hostname } : {}),
    ...port,
    ...(redirect.scheme !== undefined ? { scheme: redirect.scheme } : {}),
    redirectCode: redirect.statusCode ?? 302,
  }
}

const rewriteField = (rewrite: Rewrite, piece: PathPiece): VsHttpRoute["rewrite"] => {
  const path = rewrite.path
  const out = {
    ...(rewrite.hostname !== undefined ? { authority: rewrite.hostname } : {}),
    ...(path?.type === "ReplaceFullPath" && path.replaceFullPath !== undefined
      ? { uriRegexRewrite: { match: "^/.*$", rewrite: path.replaceFullPath } }
      : {}),
    ...(piece.prefixTo !== undefined ? { uri: piece.prefixTo } : {}),
  }
  return Object.keys(out).length === 0 ? undefined : out
}

/** The parts of one match besides its path (headers, query parameters, method). */
export type MatchRest = Omit<VsMatch, "uri">

/**
 * The VirtualService routes of one match of a rule: usually one; two for a segment prefix whose
 * matched prefix is replaced.
 */
export const routesForMatch = (
  action: RuleAction,
  name: string,
  path: PathMatch,
  rest: MatchRest,
): ReadonlyArray<VsHttpRoute> => {
  const modifier = action.redirect?.path ?? action.rewrite?.path
  const replacement = isPrefixReplacement(modifier) ? (modifier?.replacePrefixMatch ?? "/") : undefined
  return pathGroups(path, replacement).map((pieces) => {
    const match = pieces.map((piece): VsMatch => ({ ...(piece.uri !== undefined ? { uri: piece.uri } : {}), ...rest }))
    const first = pieces[0]!
    const rewrite = action.rewrite !== undefined ? rewriteField(action.rewrite, first) : undefined
    const empty = match.every((m) => Object.keys(m).length === 0)
    return {
      name,
      ...(empty ? {} : { match }),
      ...action.fields,
      ...(action.redirect !== undefined ? { redirect: redirectField(action.redirect, first) } : {}),
      ...(rewrite !== undefined ? { rewrite } : {}),
    } as VsHttpRoute
  })
}
