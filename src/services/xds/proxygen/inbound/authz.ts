/**
 * AuthorizationPolicy → the RBAC filters of a sidecar's inbound chains, in the reference's order:
 * AUDIT (action LOG), CUSTOM, DENY, ALLOW. The rule translation is grpc-rbac.ts's (the same
 * principals and permissions a gRPC server gets); what a sidecar adds:
 *
 * - Request principals and `request.auth.*` conditions, read from the verified JWT payloads the
 *   jwt_authn filter leaves in its dynamic metadata under each issuer (jwt.ts). A rule whose
 *   `from` entries differ in JWT conditions is split per entry (entries are alternatives, and
 *   the policies of one filter are too), so each entry's JWT condition joins only its own.
 * - AUDIT policies: an RBAC filter with action LOG, matching as DENY rules do.
 * - CUSTOM policies: their rules select the requests an external authorizer checks, through the
 *   mesh config extension provider they name (ext-authz.ts). A provider that is missing, of
 *   another kind, invalid, or one of several gives the workload a deny-all filter instead, as
 *   the reference does for a provider it cannot use. An HTTP provider cannot check TCP
 *   connections: there the connections the CUSTOM rules select are denied.
 * - TCP ports get network RBAC filters; HTTP-only fields make an ALLOW rule match nothing and are
 *   dropped from DENY/AUDIT rules (they then match more), each with a warning.
 */
import { Either } from "effect"
import { applicablePolicies, rbacFilters } from "../../grpcgen/grpc-rbac.js"
import type {
  AuthorizationCondition,
  AuthorizationPolicyView,
  AuthorizationRule,
} from "../../model/authorization-policy-view.js"
import type { PushContext } from "../../model/push-context.js"
import { typed, typedFields } from "../../protocol/typed-any.js"
import type {
  Envoy_Type_Matcher_StringMatcher,
  HttpFilter,
  Listener_Filter,
  Permission,
  Principal,
  RBAC_Action,
  ValueMatcher,
} from "../../protocol/xds-types.js"
import type { ProxyView } from "../proxy-view.js"
import { Filter, TypedConfig } from "../well-known.js"
import {
  customPolicyId,
  httpExtAuthzFilters,
  networkExtAuthzFilters,
  type ResolvedExtAuthz,
  resolveExtAuthz,
} from "./ext-authz.js"

type Fields = AuthorizationRule["from"][number]
type Policy = { readonly principals: ReadonlyArray<Principal>; readonly permissions: ReadonlyArray<Permission> }

export interface AuthzFilters {
  /** HTTP filters, in order, for the connection manager. */
  readonly http: ReadonlyArray<HttpFilter>
  /** Network filters, in order, before tcp_proxy. */
  readonly network: ReadonlyArray<Listener_Filter>
  readonly warnings: ReadonlyArray<string>
}

// ---------------------------------------------------------------------------------------------
// JWT principals

const ANY: Principal & Permission = { any: true }
const NEVER: Principal = { not_id: ANY }
const or = (ids: ReadonlyArray<Principal>): Principal =>
  ids.length === 0 ? NEVER : ids.length === 1 ? ids[0]! : { or_ids: { ids } }
const and = (ids: ReadonlyArray<Principal>): Principal =>
  ids.length === 0 ? ANY : ids.length === 1 ? ids[0]! : { and_ids: { ids } }

/** `*` (present), `prefix*`, `*suffix` or exact, as the other RBAC values are. */
const stringMatcher = (value: string): Envoy_Type_Matcher_StringMatcher =>
  value === "*"
    ? { safe_regex: { regex: ".+" } }
    : value.startsWith("*")
      ? { suffix: value.slice(1) }
      : value.endsWith("*")
        ? { prefix: value.slice(0, -1) }
        : { exact: value }

const metadata = (path: ReadonlyArray<string>, value: ValueMatcher): Principal => ({
  metadata: { filter: Filter.jwt, path: path.map((key) => ({ key })), value },
})

/** A claim holding `value` itself, or a list holding it. */
const claimValue = (value: string): ValueMatcher => ({
  or_match: {
    value_matchers: [
      { string_match: stringMatcher(value) },
      { list_match: { one_of: { string_match: stringMatcher(value) } } },
    ],
  },
})

/**
 * A request principal (`<issuer>/<subject>`, with `*` forms) as metadata matchers over the known
 * issuers: the issuer is a path key, so each form is resolved against each issuer. A principal
 * no known issuer can produce matches nothing (no token can carry it).
 */
const requestPrincipal = (value: string, issuers: ReadonlyArray<string>): Principal => {
  const present: ValueMatcher = { present_match: true }
  const ids: Array<Principal> = []
  for (const issuer of issuers) {
    const lead = `${issuer}/`
    if (value === "*") ids.push(metadata([issuer, "sub"], present))
    else if (value.endsWith("*") && !value.startsWith("*")) {
      const prefix = value.slice(0, -1)
      if (prefix.startsWith(lead)) {
        const rest = prefix.slice(lead.length)
        ids.push(metadata([issuer, "sub"], rest === "" ? present : { string_match: { prefix: rest } }))
      } else if (lead.startsWith(prefix)) ids.push(metadata([issuer, "sub"], present))
    } else if (value.startsWith("*")) {
      const suffix = value.slice(1)
      const slash = suffix.lastIndexOf("/")
      if (slash < 0) ids.push(metadata([issuer, "sub"], { string_match: { suffix } }))
      else if (issuer.endsWith(suffix.slice(0, slash)) && slash < suffix.length - 1)
        ids.push(metadata([issuer, "sub"], { string_match: { exact: suffix.slice(slash + 1) } }))
    } else if (value.startsWith(lead) && value.length > lead.length)
      ids.push(metadata([issuer, "sub"], { string_match: { exact: value.slice(lead.length) } }))
  }
  return or(ids)
}

const CLAIM_KEY = /^request\.auth\.claims((?:\[[^\]]+\])+)$/

/** The claim path of a `request.auth.*` key, or undefined for the principal / an unknown key. */
const claimPath = (key: string): ReadonlyArray<string> | undefined => {
  if (key === "request.auth.audiences") return ["aud"]
  if (key === "request.auth.presenter") return ["azp"]
  const m = CLAIM_KEY.exec(key)
  if (m === null) return undefined
  return [...m[1]!.matchAll(/\[([^\]]+)\]/g)].map((g) => g[1]!)
}

const isJwtKey = (key: string): boolean => key.startsWith("request.auth.")

const valuesClause = (
  values: ReadonlyArray<string>,
  notValues: ReadonlyArray<string>,
  one: (v: string) => Principal,
): ReadonlyArray<Principal> => [
  ...(values.length > 0 ? [or(values.map(one))] : []),
  ...(notValues.length > 0 ? [{ not_id: or(notValues.map(one)) }] : []),
]

const jwtCondition = (c: AuthorizationCondition, issuers: ReadonlyArray<string>): ReadonlyArray<Principal> => {
  if (c.key === "request.auth.principal")
    return valuesClause(c.values, c.notValues, (v) => requestPrincipal(v, issuers))
  const path = claimPath(c.key) ?? [c.key.slice("request.auth.".length)]
  return valuesClause(c.values, c.notValues, (v) => or(issuers.map((iss) => metadata([iss, ...path], claimValue(v)))))
}

const jwtSource = (source: Fields, issuers: ReadonlyArray<string>): ReadonlyArray<Principal> =>
  valuesClause(source.requestPrincipals ?? [], source.notRequestPrincipals ?? [], (v) => requestPrincipal(v, issuers))

const without = (fields: Fields, keys: ReadonlyArray<string>): Fields => {
  const out: Record<string, ReadonlyArray<string>> = {}
  for (const [k, v] of Object.entries(fields)) if (!keys.includes(k)) out[k] = v
  return out
}

// ---------------------------------------------------------------------------------------------
// Rules → parts grpc-rbac translates

const JWT_SOURCE_FIELDS = ["requestPrincipals", "notRequestPrincipals"]
const HTTP_OPERATION_FIELDS = ["hosts", "notHosts", "methods", "notMethods", "paths", "notPaths"]
const isHttpKey = (key: string): boolean => isJwtKey(key) || key.startsWith("request.headers[")

/** One policy entry to emit: a JWT-free rule for grpc-rbac, and the JWT principals to add. */
interface Part {
  readonly rule: AuthorizationRule
  readonly extra: ReadonlyArray<Principal>
  readonly suffix: string
}

const httpParts = (rule: AuthorizationRule, issuers: ReadonlyArray<string>): ReadonlyArray<Part> => {
  const jwtWhen = rule.when.filter((c) => isJwtKey(c.key))
  const when = rule.when.filter((c) => !isJwtKey(c.key))
  const whenExtra = jwtWhen.flatMap((c) => jwtCondition(c, issuers))
  const perFrom = rule.from.map((f) => jwtSource(f, issuers))
  if (jwtWhen.length === 0 && perFrom.every((x) => x.length === 0)) return [{ rule, extra: [], suffix: "" }]
  const from = rule.from.map((f) => without(f, JWT_SOURCE_FIELDS))
  if (rule.from.length <= 1)
    return [{ rule: { from, to: rule.to, when }, extra: [...(perFrom[0] ?? []), ...whenExtra], suffix: "" }]
  return from.map((f, j) => ({
    rule: { from: [f], to: rule.to, when },
    extra: [...perFrom[j]!, ...whenExtra],
    suffix: `-from[${j}]`,
  }))
}

/** The HTTP-only fields of a rule, by name (for the warning). */
const httpOnlyFields = (rule: AuthorizationRule): ReadonlyArray<string> => {
  const found = new Set<string>()
  for (const f of rule.from) for (const k of JWT_SOURCE_FIELDS) if (f[k] !== undefined) found.add(k)
  for (const t of rule.to) for (const k of HTTP_OPERATION_FIELDS) if (t[k] !== undefined) found.add(k)
  for (const c of rule.when) if (isHttpKey(c.key)) found.add(c.key)
  return [...found]
}

const tcpRule = (rule: AuthorizationRule): AuthorizationRule => ({
  from: rule.from.map((f) => without(f, JWT_SOURCE_FIELDS)),
  to: rule.to.map((t) => without(t, HTTP_OPERATION_FIELDS)),
  when: rule.when.filter((c) => !isHttpKey(c.key)),
})

/** grpc-rbac's words are for gRPC servers and its single-rule view's index: put back ours. */
const retext = (warning: string, id: string, ruleName: string): string =>
  warning
    .replace(`AuthorizationPolicy ${id} rule 0:`, `AuthorizationPolicy ${id} ${ruleName}:`)
    .replace(/gRPC servers/g, "sidecars")

/** One part through grpc-rbac (as a one-rule policy); undefined when the rule can never match. */
const translate = (
  view: AuthorizationPolicyView,
  part: Part,
  deny: boolean,
  ruleName: string,
  warnings: Array<string>,
): Policy | undefined => {
  const result = rbacFilters([{ ...view, action: deny ? "DENY" : "ALLOW", rules: [part.rule] }])
  const id = `${view.namespace}/${view.name}`
  for (const w of result.warnings) warnings.push(retext(w, id, ruleName))
  const rules = typedFields(result.filters[0]?.typed_config, TypedConfig.rbac)?.rules
  // grpc-rbac sets both lists of every policy it makes.
  const policy = Object.values(rules?.policies ?? {})[0] as Policy | undefined
  if (policy === undefined || part.extra.length === 0) return policy
  const base = policy.principals[0] ?? ANY
  return { ...policy, principals: [and([...(base === ANY || base.any === true ? [] : [base]), ...part.extra])] }
}

// ---------------------------------------------------------------------------------------------
// Filters

const CUSTOM_DENY_ALL = "default-deny-all-due-to-bad-CUSTOM-action"
const denyAll: Policy = { permissions: [ANY], principals: [ANY] }
/** What a CUSTOM policy without rules selects: nothing (its id stays visible in the config). */
const matchNever: Policy = { permissions: [{ not_rule: ANY }], principals: [NEVER] }

const httpFilter = (action: RBAC_Action, policies: Record<string, Policy>): HttpFilter => ({
  name: Filter.rbac,
  typed_config: typed(TypedConfig.rbac, { rules: { action, policies } }),
})

const networkFilter = (action: RBAC_Action, policies: Record<string, Policy>): Listener_Filter => ({
  name: Filter.networkRbac,
  typed_config: typed(TypedConfig.networkRbac, { rules: { action, policies }, stat_prefix: "tcp." }),
})

interface Buckets {
  readonly audit: Record<string, Policy>
  /** The CUSTOM policies' rules, translated as DENY rules are (they select, never allow). */
  readonly custom: Record<string, Policy>
  readonly deny: Record<string, Policy>
  readonly allow: Record<string, Policy>
  anyAllow: boolean
}

const fill = (
  policies: ReadonlyArray<AuthorizationPolicyView>,
  tcp: boolean,
  issuers: ReadonlyArray<string>,
  warnings: Array<string>,
): Buckets => {
  const b: Buckets = { audit: {}, custom: {}, deny: {}, allow: {}, anyAllow: false }
  for (const view of policies) {
    const id = `${view.namespace}/${view.name}`
    const custom = view.action === "CUSTOM"
    const deny = view.action !== "ALLOW"
    const target = custom ? b.custom : view.action === "AUDIT" ? b.audit : view.action === "DENY" ? b.deny : b.allow
    if (view.action === "ALLOW") b.anyAllow = true
    if (custom && view.rules.length === 0) b.custom[customPolicyId(view.namespace, view.name, 0)] = matchNever
    view.rules.forEach((rule, i) => {
      const ruleName = `rule ${i}`
      const key = custom
        ? customPolicyId(view.namespace, view.name, i)
        : `ns[${view.namespace}]-policy[${view.name}]-rule[${i}]`
      let parts: ReadonlyArray<Part>
      if (tcp) {
        const http = httpOnlyFields(rule)
        if (http.length > 0) {
          warnings.push(
            `AuthorizationPolicy ${id} ${ruleName}: HTTP-only ${http.join(", ")} on a TCP port; ${
              deny ? "ignored there (the rule matches more)" : "the rule matches nothing there"
            }`,
          )
          if (!deny) return
        }
        parts = [{ rule: tcpRule(rule), extra: [], suffix: "" }]
      } else parts = httpParts(rule, issuers)
      for (const part of parts) {
        const policy = translate(view, part, deny, ruleName, warnings)
        if (policy !== undefined) target[`${key}${part.suffix}`] = policy
      }
    })
  }
  return b
}

type Make<F> = (action: RBAC_Action, policies: Record<string, Policy>) => F

/** The filters of one protocol, in the reference's order: AUDIT, CUSTOM, DENY, ALLOW. */
const assemble = <F>(b: Buckets, make: Make<F>, custom: (b: Buckets) => ReadonlyArray<F>): ReadonlyArray<F> => [
  ...(Object.keys(b.audit).length > 0 ? [make("LOG", b.audit)] : []),
  ...custom(b),
  ...(Object.keys(b.deny).length > 0 ? [make("DENY", b.deny)] : []),
  // An ALLOW policy whose rules all match nothing still allows nothing.
  ...(b.anyAllow ? [make("ALLOW", b.allow)] : []),
]

/** What the CUSTOM policies become on a protocol's chains, once their provider is resolved. */
const customFilters = <F>(
  resolved: Either.Either<ResolvedExtAuthz, string> | undefined,
  make: Make<F>,
  extAuthz: (ext: ResolvedExtAuthz) => ((b: Buckets) => ReadonlyArray<F>) | undefined,
): ((b: Buckets) => ReadonlyArray<F>) => {
  if (resolved === undefined) return () => []
  if (Either.isLeft(resolved)) return () => [make("DENY", { [CUSTOM_DENY_ALL]: denyAll })]
  // No check is possible (an HTTP provider on TCP): what the authorizer would have been asked about is refused.
  return extAuthz(resolved.right) ?? ((b) => [make("DENY", b.custom)])
}

const httpExtAuthz = (ext: ResolvedExtAuthz) => (b: Buckets) => httpExtAuthzFilters(ext, b.custom)
const networkExtAuthz = (ext: ResolvedExtAuthz) => {
  const network = ext.tcp
  return network === undefined ? undefined : (b: Buckets) => networkExtAuthzFilters(network, b.custom)
}

/** The RBAC (and ext_authz) filters of a workload's inbound HTTP and TCP chains. */
export const authzFilters = (push: PushContext, proxy: ProxyView, issuers: ReadonlyArray<string>): AuthzFilters => {
  const applicable = applicablePolicies(
    push.authorizationPolicies,
    push.options.rootNamespace,
    proxy.namespace,
    proxy.labels,
  )
  const warnings = applicable.warnings.map((w) => w.replace(/gRPC servers/g, "sidecars"))
  const customPolicies = applicable.policies.filter((view) => view.action === "CUSTOM")
  const resolved =
    customPolicies.length === 0
      ? undefined
      : resolveExtAuthz(
          push,
          customPolicies.map((view) => view.provider ?? ""),
        )
  if (resolved !== undefined && Either.isLeft(resolved))
    for (const view of customPolicies)
      warnings.push(
        `AuthorizationPolicy ${view.namespace}/${view.name} field provider: ${resolved.left}; the workload denies every request`,
      )
  if (resolved !== undefined && Either.isRight(resolved) && resolved.right.tcp === undefined)
    for (const view of customPolicies)
      warnings.push(
        `AuthorizationPolicy ${view.namespace}/${view.name} field provider: the HTTP provider "${resolved.right.provider}" cannot check TCP connections; on TCP ports the connections its rules select are denied`,
      )
  // Rules of CUSTOM policies that cannot be applied are not translated (nor reported).
  const translated =
    resolved !== undefined && Either.isLeft(resolved)
      ? applicable.policies.filter((view) => view.action !== "CUSTOM")
      : applicable.policies
  const httpWarnings: Array<string> = []
  const tcpWarnings: Array<string> = []
  const http = assemble(
    fill(translated, false, issuers, httpWarnings),
    httpFilter,
    customFilters(resolved, httpFilter, httpExtAuthz),
  )
  const network = assemble(
    fill(translated, true, issuers, tcpWarnings),
    networkFilter,
    customFilters(resolved, networkFilter, networkExtAuthz),
  )
  // The same rule warns once per protocol at most; keep each text once.
  return { http, network, warnings: [...new Set([...warnings, ...httpWarnings, ...tcpWarnings])] }
}
