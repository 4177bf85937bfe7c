/**
 * HTTPRoute / GRPCRoute filters → VirtualService route fields: header modifiers → `headers`,
 * RequestMirror → `mirrors` (with its percentage), RequestRedirect → `redirect`, URLRewrite →
 * `rewrite`, CORS → `corsPolicy`. Path modifiers depend on the match (a prefix replacement rewrites what the prefix
 * matched), so they are kept here and applied per match (see http-routes.ts). A filter type the
 * route kind does not support, or an ExtensionRef, makes the rule answer 500 instead of being
 * skipped, as the API requires.
 */
import type { HTTPHeaderFilter, HTTPPathModifier, HTTPRouteFilter } from "../config-model/schemas/gateway-api/types.js"
import type { HTTPRoute as VsHttpRoute } from "../config-model/schemas/virtual-service.js"
import { type BackendContext, type Destination, resolveBackend } from "./backends.js"
import { type Problem, Reason } from "./conditions.js"
import { corsPolicyOf } from "./cors.js"

type CorsPolicy = NonNullable<VsHttpRoute["corsPolicy"]>

export interface HeaderOperations {
  readonly set?: Readonly<Record<string, string>>
  readonly add?: Readonly<Record<string, string>>
  readonly remove?: ReadonlyArray<string>
}

export interface HeaderChanges {
  readonly request?: HeaderOperations
  readonly response?: HeaderOperations
}

export interface Mirror {
  readonly destination: Destination
  readonly percentage?: { readonly value: number }
}

export interface Redirect {
  readonly scheme?: string
  readonly hostname?: string
  readonly port?: number
  readonly statusCode?: number
  readonly path?: HTTPPathModifier
}

export interface Rewrite {
  readonly hostname?: string
  readonly path?: HTTPPathModifier
}

export interface RuleFilters {
  readonly headers?: HeaderChanges
  readonly mirrors: ReadonlyArray<Mirror>
  readonly redirect?: Redirect
  readonly rewrite?: Rewrite
  /** The CORS filter's policy (HTTPRoute). */
  readonly cors?: CorsPolicy
  /** Filters that cannot be honoured: the rule answers 500 (route Accepted=False UnsupportedValue). */
  readonly unsupported: ReadonlyArray<Problem>
  /** Mirror backends that do not resolve (route ResolvedRefs=False); the mirror is left out. */
  readonly refProblems: ReadonlyArray<Problem>
}

export type FilterType = HTTPRouteFilter["type"]

export const headerOperations = (filter: HTTPHeaderFilter | undefined): HeaderOperations | undefined => {
  if (filter === undefined) return undefined
  const map = (headers: ReadonlyArray<{ readonly name: string; readonly value: string }> | undefined) =>
    headers === undefined || headers.length === 0
      ? undefined
      : Object.fromEntries(headers.map((h) => [h.name, h.value]))
  const set = map(filter.set)
  const add = map(filter.add)
  const remove = filter.remove !== undefined && filter.remove.length > 0 ? filter.remove : undefined
  if (set === undefined && add === undefined && remove === undefined) return undefined
  return {
    ...(set !== undefined ? { set } : {}),
    ...(add !== undefined ? { add } : {}),
    ...(remove !== undefined ? { remove } : {}),
  }
}

const mirrorPercentage = (mirror: NonNullable<HTTPRouteFilter["requestMirror"]>): number | undefined => {
  if (mirror.percent !== undefined) return mirror.percent
  if (mirror.fraction !== undefined) {
    const denominator = mirror.fraction.denominator ?? 100
    return denominator > 0 ? (mirror.fraction.numerator * 100) / denominator : undefined
  }
  return undefined
}

/** The filters of a rule (or of one backend, with `allowed` narrowed to header modifiers). */
export const translateFilters = (
  filters: ReadonlyArray<HTTPRouteFilter> | undefined,
  allowed: ReadonlySet<FilterType>,
  backends: BackendContext,
): RuleFilters => {
  let request: HeaderOperations | undefined
  let response: HeaderOperations | undefined
  const mirrors: Array<Mirror> = []
  let redirect: Redirect | undefined
  let rewrite: Rewrite | undefined
  let cors: CorsPolicy | undefined
  const unsupported: Array<Problem> = []
  const refProblems: Array<Problem> = []
  for (const filter of filters ?? []) {
    if (!allowed.has(filter.type)) {
      const what =
        filter.type === "ExtensionRef" && filter.extensionRef !== undefined
          ? `ExtensionRef ${filter.extensionRef.group}/${filter.extensionRef.kind} ${filter.extensionRef.name}`
          : filter.type
      unsupported.push({ reason: Reason.UnsupportedValue, message: `unsupported filter ${what}` })
      continue
    }
    switch (filter.type) {
      case "RequestHeaderModifier":
        request = headerOperations(filter.requestHeaderModifier) ?? request
        break
      case "ResponseHeaderModifier":
        response = headerOperations(filter.responseHeaderModifier) ?? response
        break
      case "RequestMirror": {
        const spec = filter.requestMirror
        if (spec === undefined) break
        const resolved = resolveBackend({ ...spec.backendRef, weight: 1 }, backends)
        if (!resolved.ok) {
          refProblems.push(resolved.problem)
          break
        }
        const value = mirrorPercentage(spec)
        mirrors.push({ destination: resolved.destination, ...(value !== undefined ? { percentage: { value } } : {}) })
        break
      }
      case "RequestRedirect": {
        const spec = filter.requestRedirect ?? {}
        redirect = {
          ...(spec.scheme !== undefined ? { scheme: spec.scheme } : {}),
          ...(spec.hostname !== undefined ? { hostname: spec.hostname } : {}),
          ...(spec.port !== undefined ? { port: spec.port } : {}),
          ...(spec.statusCode !== undefined ? { statusCode: spec.statusCode } : {}),
          ...(spec.path !== undefined ? { path: spec.path } : {}),
        }
        break
      }
      case "URLRewrite": {
        const spec = filter.urlRewrite ?? {}
        rewrite = {
          ...(spec.hostname !== undefined ? { hostname: spec.hostname } : {}),
          ...(spec.path !== undefined ? { path: spec.path } : {}),
        }
        break
      }
      case "CORS":
        cors = corsPolicyOf(filter.cors)
        break
      default:
        unsupported.push({ reason: Reason.UnsupportedValue, message: `unsupported filter ${filter.type}` })
    }
  }
  const headers: HeaderChanges | undefined =
    request === undefined && response === undefined
      ? undefined
      : { ...(request !== undefined ? { request } : {}), ...(response !== undefined ? { response } : {}) }
  return {
    ...(headers !== undefined ? { headers } : {}),
    mirrors,
    ...(redirect !== undefined ? { redirect } : {}),
    ...(rewrite !== undefined ? { rewrite } : {}),
    ...(cors !== undefined ? { cors } : {}),
    unsupported,
    refProblems,
  }
}

export const HTTP_ROUTE_FILTERS: ReadonlySet<FilterType> = new Set([
  "RequestHeaderModifier",
  "ResponseHeaderModifier",
  "RequestMirror",
  "RequestRedirect",
  "URLRewrite",
  "CORS",
])

export const GRPC_ROUTE_FILTERS: ReadonlySet<FilterType> = new Set([
  "RequestHeaderModifier",
  "ResponseHeaderModifier",
  "RequestMirror",
])

/** Per-backend filters: only header changes can be applied to one destination. */
export const BACKEND_FILTERS: ReadonlySet<FilterType> = new Set(["RequestHeaderModifier", "ResponseHeaderModifier"])
