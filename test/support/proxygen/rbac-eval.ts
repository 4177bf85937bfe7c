/**
 * Envoy's RBAC filters (network and HTTP, `envoy.config.rbac.v3.RBAC` rules) evaluated for one
 * connection or request: a policy matches when one of its permissions and one of its principals
 * match; an ALLOW filter lets through only what some policy matches, a DENY filter stops what
 * some policy matches, a LOG (the mesh's AUDIT) filter decides nothing. Shadow rules are ignored,
 * as the proxy only records them.
 */
import {
  arr,
  cidrPrefixMatch,
  type Headers,
  headerMatches,
  int,
  type Obj,
  obj,
  str,
  stringMatches,
} from "./matchers.js"

export interface RbacContext {
  /** The peer certificate's URI SAN (`spiffe://...`); undefined without a client certificate. */
  readonly principal?: string | undefined
  readonly sourceIp?: string | undefined
  readonly destinationIp?: string | undefined
  readonly destinationPort: number
  readonly sni?: string | undefined
  /** Present for HTTP: the request; names lower case, pseudo-headers (`:path`, `:method`) included. */
  readonly http?: { readonly path: string; readonly headers: Headers } | undefined
}

const pathOnly = (path: string): string => path.split("?")[0]!

export const permissionMatches = (p: Obj, ctx: RbacContext): boolean => {
  if (p.any === true) return true
  const and = obj(p.and_rules)
  if (and !== undefined) return arr(and.rules).every((r) => permissionMatches(r, ctx))
  const or = obj(p.or_rules)
  if (or !== undefined) return arr(or.rules).some((r) => permissionMatches(r, ctx))
  const not = obj(p.not_rule)
  if (not !== undefined) return !permissionMatches(not, ctx)
  const header = obj(p.header)
  if (header !== undefined) return ctx.http !== undefined && headerMatches(header, ctx.http.headers)
  const urlPath = obj(p.url_path)
  if (urlPath !== undefined) return ctx.http !== undefined && stringMatches(obj(urlPath.path), pathOnly(ctx.http.path))
  const dstIp = obj(p.destination_ip)
  if (dstIp !== undefined) return ctx.destinationIp !== undefined && cidrPrefixMatch(dstIp, ctx.destinationIp) >= 0
  if (p.destination_port !== undefined) return int(p.destination_port) === ctx.destinationPort
  const range = obj(p.destination_port_range)
  if (range !== undefined)
    return ctx.destinationPort >= (int(range.start) ?? 0) && ctx.destinationPort < (int(range.end) ?? 0)
  const sni = obj(p.requested_server_name)
  if (sni !== undefined) return stringMatches(sni, ctx.sni ?? "")
  throw new Error(`the evaluator does not know the RBAC permission ${JSON.stringify(p)}`)
}

export const principalMatches = (id: Obj, ctx: RbacContext): boolean => {
  if (id.any === true) return true
  const and = obj(id.and_ids)
  if (and !== undefined) return arr(and.ids).every((i) => principalMatches(i, ctx))
  const or = obj(id.or_ids)
  if (or !== undefined) return arr(or.ids).some((i) => principalMatches(i, ctx))
  const not = obj(id.not_id)
  if (not !== undefined) return !principalMatches(not, ctx)
  const authenticated = obj(id.authenticated)
  if (authenticated !== undefined) {
    if (ctx.principal === undefined) return false
    const name = obj(authenticated.principal_name)
    return name === undefined || stringMatches(name, ctx.principal)
  }
  const ip = obj(id.source_ip) ?? obj(id.direct_remote_ip) ?? obj(id.remote_ip)
  if (ip !== undefined) return ctx.sourceIp !== undefined && cidrPrefixMatch(ip, ctx.sourceIp) >= 0
  const header = obj(id.header)
  if (header !== undefined) return ctx.http !== undefined && headerMatches(header, ctx.http.headers)
  const urlPath = obj(id.url_path)
  if (urlPath !== undefined) return ctx.http !== undefined && stringMatches(obj(urlPath.path), pathOnly(ctx.http.path))
  // JWT claims and other metadata: the evaluator holds none, so they never match.
  if (id.metadata !== undefined || id.filter_state !== undefined) return false
  throw new Error(`the evaluator does not know the RBAC principal ${JSON.stringify(id)}`)
}

export type RbacDecision =
  | { readonly decision: "allow"; readonly policy?: string }
  | { readonly decision: "deny"; readonly policy?: string }

/** One RBAC filter's config (the typed_config of a network or HTTP RBAC filter). */
export const evaluateRbac = (config: Obj, ctx: RbacContext): RbacDecision => {
  const rules = obj(config.rules)
  if (rules === undefined) {
    if (config.matcher !== undefined) throw new Error("the evaluator does not know matcher-based RBAC")
    return { decision: "allow" }
  }
  const policies = obj(rules.policies) ?? {}
  const matched = Object.keys(policies)
    .sort()
    .find((name) => {
      const policy = obj(policies[name])!
      if (policy.condition !== undefined || policy.checked_condition !== undefined)
        throw new Error(`the evaluator does not know RBAC conditions (policy ${name})`)
      return (
        arr(policy.permissions).some((p) => permissionMatches(p, ctx)) &&
        arr(policy.principals).some((p) => principalMatches(p, ctx))
      )
    })
  const action = str(rules.action) ?? "ALLOW"
  if (action === "DENY") return matched === undefined ? { decision: "allow" } : { decision: "deny", policy: matched }
  if (action === "LOG") return { decision: "allow" }
  return matched === undefined ? { decision: "deny" } : { decision: "allow", policy: matched }
}
