import type {
  AuthorizationCondition,
  AuthorizationPolicyView,
  AuthorizationRule,
  Fields,
} from "../model/authorization-policy-view.js"
import { typed } from "../protocol/typed-any.js"
import type {
  CidrRange,
  Envoy_Type_Matcher_StringMatcher,
  HeaderMatcher,
  HttpFilter,
  Permission,
  Policy,
  Principal,
} from "../protocol/xds-types.js"

export const RBAC_TYPE = "type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC"
export const RBAC_DENY_FILTER = "envoy.filters.http.rbac.deny"
export const RBAC_ALLOW_FILTER = "envoy.filters.http.rbac.allow"

// ---------------------------------------------------------------------------------------------
// Which policies apply

export interface Applicable {
  readonly policies: ReadonlyArray<AuthorizationPolicyView>
  readonly warnings: ReadonlyArray<string>
}

/** The policies that apply to a workload (namespace + labels), oldest first as given. */
export const applicablePolicies = (
  policies: ReadonlyArray<AuthorizationPolicyView>,
  rootNamespace: string,
  namespace: string,
  labels: Readonly<Record<string, string>>,
): Applicable => {
  const warnings: Array<string> = []
  const out = policies.filter((p) => {
    if (p.namespace !== rootNamespace && p.namespace !== namespace) return false
    if (p.selector !== undefined && !Object.entries(p.selector).every(([k, v]) => labels[k] === v)) return false
    if (p.targeted) {
      warnings.push(`AuthorizationPolicy ${p.namespace}/${p.name}: targetRef(s) do not apply to gRPC servers, ignored`)
      return false
    }
    return true
  })
  return { policies: out, warnings }
}

// ---------------------------------------------------------------------------------------------
// Matchers

const ANY_VALUE: Envoy_Type_Matcher_StringMatcher = { safe_regex: { regex: ".+" } }

/** `*` (any non-empty), `prefix*`, `*suffix` or an exact value; `prefix` is put before exact/prefix forms. */
const wildcardMatcher = (value: string, prefix = ""): Envoy_Type_Matcher_StringMatcher =>
  value === "*"
    ? ANY_VALUE
    : value.startsWith("*")
      ? { suffix: value.slice(1) }
      : value.endsWith("*")
        ? { prefix: `${prefix}${value.slice(0, -1)}` }
        : { exact: `${prefix}${value}` }

const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

// A SPIFFE id's namespace as a regular expression over the whole id (any characters, then
// "/ns/<ns>/", then any characters), with the `*`, `prefix*` and `*suffix` forms of <ns>.
const namespaceRegex = (value: string): string => {
  const part =
    value === "*"
      ? "[^/]+"
      : value.startsWith("*")
        ? `[^/]*${escapeRegex(value.slice(1))}`
        : value.endsWith("*")
          ? `${escapeRegex(value.slice(0, -1))}[^/]*`
          : escapeRegex(value)
  return `.*/ns/${part}/.*`
}

const authenticated = (principalName: Envoy_Type_Matcher_StringMatcher): Principal => ({
  authenticated: { principal_name: principalName },
})
const principalId = (value: string): Principal => authenticated(wildcardMatcher(value, "spiffe://"))
const namespaceId = (value: string): Principal => authenticated({ safe_regex: { regex: namespaceRegex(value) } })
/** `serviceAccounts` entries are `<namespace>/<name>`. */
const serviceAccountId = (value: string): Principal | undefined => {
  const [ns, sa, ...rest] = value.split("/")
  if (ns === undefined || sa === undefined || ns === "" || sa === "" || rest.length > 0) return undefined
  return authenticated({ safe_regex: { regex: `.*/ns/${escapeRegex(ns)}/sa/${escapeRegex(sa)}` } })
}

/** `10.0.0.0/8` or a bare address (a host route); undefined when it is neither. */
export const cidrRange = (value: string): CidrRange | undefined => {
  const slash = value.indexOf("/")
  const address = slash < 0 ? value : value.slice(0, slash)
  const v6 = address.includes(":")
  if (!v6 && !/^\d{1,3}(\.\d{1,3}){3}$/.test(address)) return undefined
  const max = v6 ? 128 : 32
  const len = slash < 0 ? max : Number(value.slice(slash + 1))
  if (!Number.isInteger(len) || len < 0 || len > max) return undefined
  return { address_prefix: address, prefix_len: { value: len } }
}

const headerMatch = (name: string, value: string): HeaderMatcher =>
  value === "*" ? { name, present_match: true } : { name, string_match: wildcardMatcher(value) }

const portNumber = (value: string): number | undefined => {
  const n = Number(value)
  return /^\d+$/.test(value) && n > 0 && n <= 65535 ? n : undefined
}

// ---------------------------------------------------------------------------------------------
// Combinators over principals (`*_ids`) and permissions (`*_rules`)

interface Algebra<T> {
  readonly any: T
  readonly and: (items: ReadonlyArray<T>) => T
  readonly or: (items: ReadonlyArray<T>) => T
  readonly not: (item: T) => T
}

const principalAlgebra: Algebra<Principal> = {
  any: { any: true },
  and: (ids) => (ids.length === 1 ? ids[0]! : { and_ids: { ids } }),
  or: (ids) => (ids.length === 1 ? ids[0]! : { or_ids: { ids } }),
  not: (id) => ({ not_id: id }),
}

const permissionAlgebra: Algebra<Permission> = {
  any: { any: true },
  and: (rules) => (rules.length === 1 ? rules[0]! : { and_rules: { rules } }),
  or: (rules) => (rules.length === 1 ? rules[0]! : { or_rules: { rules } }),
  not: (rule) => ({ not_rule: rule }),
}

/** Values of one field or condition: any of `values`, and none of `notValues`. */
const valuesClause = <T>(
  algebra: Algebra<T>,
  values: ReadonlyArray<T>,
  notValues: ReadonlyArray<T>,
): ReadonlyArray<T> => [
  ...(values.length > 0 ? [algebra.or(values)] : []),
  ...(notValues.length > 0 ? [algebra.not(algebra.or(notValues))] : []),
]

/** A condition we cannot evaluate: the rule is marked, the clause left out. */
class Unsupported {
  constructor(readonly what: string) {}
}

type Clause<T> = ReadonlyArray<T> | Unsupported

const mapAll = <T>(
  values: ReadonlyArray<string>,
  f: (v: string) => T | undefined,
  what: string,
): ReadonlyArray<T> | Unsupported => {
  const out: Array<T> = []
  for (const v of values) {
    const m = f(v)
    if (m === undefined) return new Unsupported(`${what} ${JSON.stringify(v)}`)
    out.push(m)
  }
  return out
}

const clause = <T>(
  algebra: Algebra<T>,
  values: ReadonlyArray<string>,
  notValues: ReadonlyArray<string>,
  f: (v: string) => T | undefined,
  what: string,
): Clause<T> => {
  const yes = mapAll(values, f, what)
  if (yes instanceof Unsupported) return yes
  const no = mapAll(notValues, f, what)
  if (no instanceof Unsupported) return no
  return valuesClause(algebra, yes, no)
}

/** Source fields → principal clauses. */
const sourceClauses = (source: Fields): ReadonlyArray<Clause<Principal>> => {
  const get = (k: string) => source[k] ?? []
  const p = principalAlgebra
  return [
    clause(p, get("principals"), get("notPrincipals"), principalId, "principal"),
    clause(p, get("namespaces"), get("notNamespaces"), namespaceId, "namespace"),
    clause(p, get("serviceAccounts"), get("notServiceAccounts"), serviceAccountId, "serviceAccount"),
    clause(p, get("ipBlocks"), get("notIpBlocks"), directRemoteIp, "ipBlock"),
    clause(p, get("remoteIpBlocks"), get("notRemoteIpBlocks"), remoteIp, "remoteIpBlock"),
    ...(get("requestPrincipals").length + get("notRequestPrincipals").length > 0
      ? [new Unsupported("requestPrincipals (JWT) are not available to gRPC servers")]
      : []),
  ]
}

/** `f` of a value that may be missing (an address or port that does not parse). */
const ifSome = <A, B>(value: A | undefined, f: (a: A) => B): B | undefined =>
  value === undefined ? undefined : f(value)
const directRemoteIp = (v: string): Principal | undefined => ifSome(cidrRange(v), (c) => ({ direct_remote_ip: c }))
const remoteIp = (v: string): Principal | undefined => ifSome(cidrRange(v), (c) => ({ remote_ip: c }))
const destinationIp = (v: string): Permission | undefined => ifSome(cidrRange(v), (c) => ({ destination_ip: c }))
const destinationPort = (v: string): Permission | undefined => ifSome(portNumber(v), (n) => ({ destination_port: n }))

/** Operation fields → permission clauses. gRPC requests are always POST. */
const operationClauses = (op: Fields): ReadonlyArray<Clause<Permission>> => {
  const get = (k: string) => op[k] ?? []
  const r = permissionAlgebra
  const path = (v: string): Permission => ({ url_path: { path: wildcardMatcher(v) } })
  const host = (v: string): Permission => ({
    header: { name: ":authority", string_match: { ...wildcardMatcher(v.toLowerCase()), ignore_case: true } },
  })
  return [
    clause(r, get("paths"), get("notPaths"), path, "path"),
    clause(r, get("methods"), get("notMethods"), (v): Permission => ({ header: headerMatch(":method", v) }), "method"),
    clause(r, get("ports"), get("notPorts"), destinationPort, "port"),
    clause(r, get("hosts"), get("notHosts"), host, "host"),
  ]
}

const HEADER_KEY = /^request\.headers\[([^\]]+)\]$/

/** A `when` condition → a principal or permission clause. */
const conditionClause = (
  c: AuthorizationCondition,
):
  | { readonly principal: true; readonly clause: Clause<Principal> }
  | { readonly principal: false; readonly clause: Clause<Permission> } => {
  const p = principalAlgebra
  const r = permissionAlgebra
  const header = HEADER_KEY.exec(c.key)
  if (header !== null) {
    const name = header[1]!.toLowerCase()
    return {
      principal: false,
      clause: clause(r, c.values, c.notValues, (v): Permission => ({ header: headerMatch(name, v) }), c.key),
    }
  }
  switch (c.key) {
    case "source.principal":
      return { principal: true, clause: clause(p, c.values, c.notValues, principalId, c.key) }
    case "source.namespace":
      return { principal: true, clause: clause(p, c.values, c.notValues, namespaceId, c.key) }
    case "source.serviceAccount":
      return { principal: true, clause: clause(p, c.values, c.notValues, serviceAccountId, c.key) }
    case "source.ip":
      return {
        principal: true,
        clause: clause(p, c.values, c.notValues, directRemoteIp, c.key),
      }
    case "remote.ip":
      return { principal: true, clause: clause(p, c.values, c.notValues, remoteIp, c.key) }
    case "destination.ip":
      return {
        principal: false,
        clause: clause(r, c.values, c.notValues, destinationIp, c.key),
      }
    case "destination.port":
      return {
        principal: false,
        clause: clause(r, c.values, c.notValues, destinationPort, c.key),
      }
    default:
      return { principal: true, clause: new Unsupported(`condition ${c.key} is not available to gRPC servers`) }
  }
}

/** An RBAC policy as this translation makes it: both lists always set. */
interface RbacPolicy extends Policy {
  readonly principals: ReadonlyArray<Principal>
  readonly permissions: ReadonlyArray<Permission>
}

/**
 * One rule → an RBAC policy, or undefined when it can never match. `deny` selects how an
 * unsupported clause is handled: left out (DENY: denies more) or fatal (ALLOW: allows less).
 */
const translateRule = (
  rule: AuthorizationRule,
  deny: boolean,
  warn: (what: string) => void,
): RbacPolicy | undefined => {
  let broken = false
  const keep = <T>(c: Clause<T>): ReadonlyArray<T> => {
    if (!(c instanceof Unsupported)) return c
    warn(c.what)
    if (!deny) broken = true
    return []
  }
  const p = principalAlgebra
  const r = permissionAlgebra
  // A source/operation whose every field is unsupported (in a DENY rule) matches anything.
  const froms = rule.from.map((s) => {
    const parts = sourceClauses(s).flatMap(keep)
    return parts.length === 0 ? p.any : p.and(parts)
  })
  const tos = rule.to.map((o) => {
    const parts = operationClauses(o).flatMap(keep)
    return parts.length === 0 ? r.any : r.and(parts)
  })
  const principalParts: Array<Principal> = froms.length > 0 ? [p.or(froms)] : []
  const permissionParts: Array<Permission> = tos.length > 0 ? [r.or(tos)] : []
  for (const c of rule.when) {
    const t = conditionClause(c)
    if (t.principal) principalParts.push(...keep(t.clause))
    else permissionParts.push(...keep(t.clause))
  }
  if (broken) return undefined
  return {
    principals: [principalParts.length === 0 ? p.any : p.and(principalParts)],
    permissions: [permissionParts.length === 0 ? r.any : r.and(permissionParts)],
  }
}

export interface RbacFilters {
  /** HTTP filters to put before the router: DENY first, then ALLOW. */
  readonly filters: ReadonlyArray<HttpFilter>
  readonly warnings: ReadonlyArray<string>
}

const filter = (name: string, action: "ALLOW" | "DENY", policies: Record<string, RbacPolicy>): HttpFilter => ({
  name,
  typed_config: typed(RBAC_TYPE, { rules: { action, policies } }),
})

/** The RBAC filters for the policies that apply to a workload. */
export const rbacFilters = (policies: ReadonlyArray<AuthorizationPolicyView>): RbacFilters => {
  const warnings: Array<string> = []
  const deny: Record<string, RbacPolicy> = {}
  const allow: Record<string, RbacPolicy> = {}
  let anyDeny = false
  let anyAllow = false
  for (const policy of policies) {
    const id = `${policy.namespace}/${policy.name}`
    if (policy.action !== "ALLOW" && policy.action !== "DENY") {
      warnings.push(`AuthorizationPolicy ${id}: action ${policy.action} is not enforced by gRPC servers, skipped`)
      continue
    }
    const isDeny = policy.action === "DENY"
    if (isDeny) anyDeny = true
    else anyAllow = true
    policy.rules.forEach((rule, i) => {
      const translated = translateRule(rule, isDeny, (what) =>
        warnings.push(
          `AuthorizationPolicy ${id} rule ${i}: ${what}; ${isDeny ? "ignored (the rule denies more)" : "the rule matches nothing"}`,
        ),
      )
      if (translated === undefined) return
      const target = isDeny ? deny : allow
      target[`ns[${policy.namespace}]-policy[${policy.name}]-rule[${i}]`] = translated
    })
  }
  return {
    filters: [
      ...(anyDeny ? [filter(RBAC_DENY_FILTER, "DENY", deny)] : []),
      ...(anyAllow ? [filter(RBAC_ALLOW_FILTER, "ALLOW", allow)] : []),
    ],
    warnings,
  }
}
