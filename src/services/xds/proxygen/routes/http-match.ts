/**
 * VirtualService HTTP matches → Envoy `config.route.v3.RouteMatch`, and which matches apply to
 * the listener asking: a match naming a port applies on that port only; one naming gateways on
 * those gateways only (`mesh` for sidecars); else one naming source labels / a source namespace
 * applies to proxies with those labels / in that namespace (the reference's order of checks).
 */
import type { HeaderMatcher, RouteMatch } from "../../protocol/xds-types.js"
import type { HttpMatch } from "./delegate.js"
import { type StringMatchSpec, sortedEntries, stringMatcher } from "./proto-values.js"
import { MESH_GATEWAY, resolveGatewayName } from "./virtual-services.js"

/** The listener a VirtualService's routes are translated for. */
export interface RouteTarget {
  /** The port of the listener (service port for sidecars, server port for gateways). */
  readonly port: number
  /** The gateway (`namespace/name`) the routes are for; absent: the mesh (a sidecar). */
  readonly gateway?: string
  /** More gateways, when one route configuration serves several Gateway resources. */
  readonly gateways?: ReadonlyArray<string>
  /** The labels of the proxy asking (matched against `sourceLabels`). */
  readonly sourceLabels: Readonly<Record<string, string>>
  /** The namespace of the proxy asking (matched against `sourceNamespace`). */
  readonly sourceNamespace: string
}

/** The gateway names a target stands for: its gateways, or `mesh`. */
export const targetGateways = (target: RouteTarget): ReadonlyArray<string> => {
  const named = [...(target.gateway !== undefined ? [target.gateway] : []), ...(target.gateways ?? [])]
  return named.length > 0 ? named : [MESH_GATEWAY]
}

/** Whether `match` (of a VirtualService in `namespace`) applies to `target`. */
export const matchApplies = (match: HttpMatch | undefined, target: RouteTarget, namespace: string): boolean => {
  if (match === undefined) return true
  if ((match.port ?? 0) !== 0 && match.port !== target.port) return false
  const gateways = match.gateways ?? []
  if (gateways.length > 0) {
    const own = targetGateways(target)
    return gateways.some((g) => own.includes(resolveGatewayName(g, namespace)))
  }
  for (const [key, value] of Object.entries(match.sourceLabels ?? {}))
    if (target.sourceLabels[key] !== value) return false
  return (match.sourceNamespace ?? "") === "" || match.sourceNamespace === target.sourceNamespace
}

/** Whether the match (when it applies) matches every request: later routes are unreachable. */
export const isCatchAll = (match: HttpMatch | undefined): boolean => {
  if (match === undefined) return true
  const uri = match.uri
  const anyPath =
    uri === undefined ||
    (uri.exact === undefined && uri.regex === undefined && (uri.prefix ?? "") === "") ||
    uri.prefix === "/" ||
    uri.regex === "*" ||
    uri.regex === ".*"
  const empty = (r: Readonly<Record<string, unknown>> | undefined) => r === undefined || Object.keys(r).length === 0
  return (
    anyPath &&
    empty(match.headers) &&
    empty(match.withoutHeaders) &&
    empty(match.queryParams) &&
    match.method === undefined &&
    match.scheme === undefined &&
    match.authority === undefined
  )
}

const headerMatcher = (name: string, match: StringMatchSpec, invert: boolean): HeaderMatcher => {
  const string = stringMatcher(match)
  return {
    name,
    ...(string !== undefined ? { string_match: string } : { present_match: true }),
    ...(invert ? { invert_match: true } : {}),
  }
}

/** Header names the route match cannot express from a sidecar (JWT claims need the gateway's authn metadata). */
const isClaim = (name: string): boolean => name.startsWith("@request.auth.claims")

export interface TranslatedMatch {
  readonly match: RouteMatch
  /** Header keys that were skipped (JWT claim routing). */
  readonly skipped: ReadonlyArray<string>
}

/** A VirtualService match as an Envoy RouteMatch (headers sorted by name, then `:method`, `:authority`, `:scheme`). */
export const routeMatch = (match: HttpMatch | undefined): TranslatedMatch => {
  const uri = match?.uri
  const path =
    uri?.exact !== undefined
      ? { path: uri.exact }
      : uri?.regex !== undefined
        ? { safe_regex: { regex: uri.regex } }
        : { prefix: uri?.prefix !== undefined && uri.prefix !== "" ? uri.prefix : "/" }
  const skipped: Array<string> = []
  const headers = [
    ...sortedEntries(match?.headers).map(([name, m]) => ({ name, m, invert: false })),
    ...sortedEntries(match?.withoutHeaders).map(([name, m]) => ({ name, m, invert: true })),
  ]
    .filter(({ name }) => {
      if (isClaim(name)) skipped.push(name)
      return !isClaim(name)
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map(({ name, m, invert }) => headerMatcher(name, m, invert))
  if (match?.method !== undefined) headers.push(headerMatcher(":method", match.method, false))
  if (match?.authority !== undefined) headers.push(headerMatcher(":authority", match.authority, false))
  if (match?.scheme !== undefined) headers.push(headerMatcher(":scheme", match.scheme, false))
  const query = sortedEntries(match?.queryParams).map(([name, m]) => {
    const string = stringMatcher(m)
    return { name, ...(string !== undefined ? { string_match: string } : { present_match: true }) }
  })
  return {
    match: {
      ...path,
      ...(match?.ignoreUriCase === true ? { case_sensitive: { value: false } } : {}),
      ...(headers.length > 0 ? { headers } : {}),
      ...(query.length > 0 ? { query_parameters: query } : {}),
    },
    skipped,
  }
}
