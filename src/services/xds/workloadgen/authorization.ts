/**
 * AuthorizationPolicies as the node proxy enforces them (L4), by the reference's rules:
 * - a policy with `targetRef(s)` is for waypoints, not the node proxy: not translated;
 * - ALLOW and DENY only (AUDIT and CUSTOM are not served); a `mesh.io/dry-run` policy is not served;
 * - scope: GLOBAL without a selector in the root namespace, NAMESPACE without a selector,
 *   WORKLOAD_SELECTOR with one (workloads name those in `authorization_policies`);
 * - each rule becomes a group: its `to` operations one rule (ports), its `from` sources one rule
 *   (namespaces, principals, service accounts, ipBlocks), each `when` condition one rule;
 * - L7 fields (hosts, methods, paths, request principals, remoteIpBlocks, non-L4 `when` keys) cannot
 *   be enforced here: an ALLOW rule with one never matches (its group is dropped, so a policy
 *   left without groups allows nothing); a DENY rule keeps its L4 part (it denies more, never
 *   less). Either way the policy's notice names the fields.
 * And the synthetic policy `mesh_allow_waypoint_<ns>_<name>` (PILOT_AUTO_ALLOW_WAYPOINT_POLICY):
 * the workloads behind a waypoint allow the waypoint's own identities.
 */

import { ipBlock } from "../../ambient/ip-bytes.js"
import type { ConfigResource } from "../../config-model/resource.js"
import type { AuthorizationPolicySpec } from "../../config-model/schemas/authorization-policy.js"
import { MESH_DOMAIN } from "../../constants.js"
import type {
  Authorization,
  Group,
  Match,
  Rules,
  Security_Address,
  ServiceAccountMatch,
  StringMatch,
} from "../protocol/xds-types.js"

export const DRY_RUN_ANNOTATION = `${MESH_DOMAIN}/dry-run`

type Rule = NonNullable<AuthorizationPolicySpec["rules"]>[number]
type Source = NonNullable<NonNullable<Rule["from"]>[number]["source"]>
type Operation = NonNullable<NonNullable<Rule["to"]>[number]["operation"]>
type Condition = NonNullable<Rule["when"]>[number]

export type Scope = "GLOBAL" | "NAMESPACE" | "WORKLOAD_SELECTOR"

export interface L4Authorization {
  /** `namespace/name`: the resource name. */
  readonly key: string
  readonly scope: Scope
  /** The policy's selector, for WORKLOAD_SELECTOR scope. */
  readonly matchLabels: Readonly<Record<string, string>>
  readonly namespace: string
  readonly message: Authorization
}

export interface Translated {
  readonly authorization?: L4Authorization
  /** Why the policy is not (or not fully) enforced by the node proxy. */
  readonly notice?: string
}

const L4_WHEN_KEYS = new Set([
  "source.ip",
  "source.namespace",
  "source.principal",
  "destination.ip",
  "destination.port",
])

/** `*` any, `*x` suffix, `x*` prefix, else exact. */
export const stringMatch = (value: string): StringMatch =>
  value === "*"
    ? { presence: {} }
    : value.startsWith("*")
      ? { suffix: value.slice(1) }
      : value.endsWith("*")
        ? { prefix: value.slice(0, -1) }
        : { exact: value }

const strings = (values: ReadonlyArray<string> | undefined): ReadonlyArray<StringMatch> =>
  (values ?? []).map(stringMatch)

/** Ports that are not numbers up to 65535 are skipped (validation refuses them anyway). */
const ports = (values: ReadonlyArray<string> | undefined): ReadonlyArray<number> =>
  (values ?? []).filter((v) => /^\d{1,5}$/.test(v) && Number(v) <= 65535).map(Number)

const ips = (values: ReadonlyArray<string> | undefined): ReadonlyArray<Security_Address> =>
  (values ?? []).flatMap((v) => {
    const block = v === "" ? undefined : ipBlock(v)
    return block === undefined ? [] : [{ address: block.address, length: block.length }]
  })

/** `ns/sa`, or `sa` in the policy's namespace. */
const accounts = (values: ReadonlyArray<string> | undefined, namespace: string): ReadonlyArray<ServiceAccountMatch> =>
  (values ?? []).map((v) => {
    const slash = v.indexOf("/")
    return slash < 0
      ? { namespace, serviceAccount: v }
      : { namespace: v.slice(0, slash), serviceAccount: v.slice(slash + 1) }
  })

/** A Match with only its non-empty fields (empty repeated fields are left out of the object). */
const match = (fields: { readonly [K in keyof Match]?: NonNullable<Match[K]> }): Match =>
  Object.fromEntries(Object.entries(fields).filter(([, v]) => v.length > 0))

const l7Operation = (op: Operation): ReadonlyArray<string> =>
  (["hosts", "notHosts", "methods", "notMethods", "paths", "notPaths"] as const).filter((f) => (op[f]?.length ?? 0) > 0)

const l7Source = (source: Source): ReadonlyArray<string> =>
  (["remoteIpBlocks", "notRemoteIpBlocks", "requestPrincipals", "notRequestPrincipals"] as const).filter(
    (f) => (source[f]?.length ?? 0) > 0,
  )

const whenMatch = (when: Condition): Match => {
  const pick = <T>(key: string, invert: boolean, f: (v: ReadonlyArray<string> | undefined) => ReadonlyArray<T>) =>
    when.key === key ? f(invert ? when.notValues : when.values) : []
  return match({
    namespaces: pick("source.namespace", false, strings),
    principals: pick("source.principal", false, strings),
    source_ips: pick("source.ip", false, ips),
    destination_ports: pick("destination.port", false, ports),
    destination_ips: pick("destination.ip", false, ips),
    not_namespaces: pick("source.namespace", true, strings),
    not_principals: pick("source.principal", true, strings),
    not_source_ips: pick("source.ip", true, ips),
    not_destination_ports: pick("destination.port", true, ports),
    not_destination_ips: pick("destination.ip", true, ips),
  })
}

/** One rule's groups of L4 rules, and the L7 fields it had. */
const translateRule = (
  rule: Rule,
  namespace: string,
  action: "ALLOW" | "DENY",
): { readonly rules: ReadonlyArray<Rules> | undefined; readonly l7: ReadonlyArray<string> } => {
  const l7: Array<string> = []
  const out: Array<Rules> = []
  const to = (rule.to ?? []).map((t) => {
    const op = t.operation ?? {}
    l7.push(...l7Operation(op))
    return match({ destination_ports: ports(op.ports), not_destination_ports: ports(op.notPorts) })
  })
  const from = (rule.from ?? []).map((f) => {
    const source = f.source ?? {}
    l7.push(...l7Source(source))
    return match({
      source_ips: ips(source.ipBlocks),
      not_source_ips: ips(source.notIpBlocks),
      namespaces: strings(source.namespaces),
      not_namespaces: strings(source.notNamespaces),
      service_accounts: accounts(source.serviceAccounts, namespace),
      not_service_accounts: accounts(source.notServiceAccounts, namespace),
      principals: strings(source.principals),
      not_principals: strings(source.notPrincipals),
    })
  })
  if (to.length > 0) out.push({ matches: to })
  if (from.length > 0) out.push({ matches: from })
  for (const when of rule.when ?? []) {
    if (!L4_WHEN_KEYS.has(when.key)) l7.push(when.key)
    out.push({ matches: [whenMatch(when)] })
  }
  // An ALLOW rule naming what only L7 can see must never allow at L4.
  return { rules: action === "ALLOW" && l7.length > 0 ? undefined : out, l7 }
}

/** The node proxy's form of an AuthorizationPolicy, or why there is none. */
export const translatePolicy = (policy: ConfigResource<AuthorizationPolicySpec>, rootNamespace: string): Translated => {
  const { spec, meta } = policy
  const name = `${meta.namespace}/${meta.name}`
  const dryRun = (meta.annotations[DRY_RUN_ANNOTATION] ?? "").toLowerCase()
  if (dryRun === "true" || dryRun === "1")
    return { notice: `AuthorizationPolicy ${name}: dry-run policies are not enforced by the node proxy` }
  if (spec.targetRef !== undefined || (spec.targetRefs?.length ?? 0) > 0) return {}
  const action = spec.action ?? "ALLOW"
  if (action !== "ALLOW" && action !== "DENY")
    return { notice: `AuthorizationPolicy ${name}: the node proxy does not support the ${action} action` }
  const matchLabels = spec.selector?.matchLabels ?? {}
  const scope: Scope =
    spec.selector !== undefined ? "WORKLOAD_SELECTOR" : meta.namespace === rootNamespace ? "GLOBAL" : "NAMESPACE"
  const groups: Array<Group> = []
  const l7 = new Set<string>()
  for (const rule of spec.rules ?? []) {
    const translated = translateRule(rule, meta.namespace, action)
    for (const field of translated.l7) l7.add(field)
    if (translated.rules !== undefined) groups.push({ rules: translated.rules })
  }
  const message: Authorization = {
    name: meta.name,
    namespace: meta.namespace,
    scope,
    action,
    groups,
  }
  const authorization: L4Authorization = { key: name, scope, matchLabels, namespace: meta.namespace, message }
  if (l7.size === 0) return { authorization }
  const effect =
    action === "ALLOW"
      ? "its rules using them never match at L4"
      : "only their L4 parts deny at L4 (use a waypoint for the rest)"
  return {
    authorization,
    notice: `AuthorizationPolicy ${name}: the node proxy cannot enforce ${[...l7].sort().join(", ")}: ${effect}`,
  }
}

/** The synthetic policy's name: `_` cannot occur in orchestrator names, so it never collides. */
export const waypointPolicyName = (waypointNamespace: string, waypointName: string): string =>
  `mesh_allow_waypoint_${waypointNamespace}_${waypointName}`

/**
 * Allow from the waypoint's identities (`<trust-domain>/ns/<ns>/sa/<sa>`, the principal form
 * without the scheme); undefined when no pod of the waypoint is known yet.
 */
export const waypointAllowPolicy = (
  waypointNamespace: string,
  waypointName: string,
  serviceAccounts: ReadonlyArray<string>,
  trustDomain: string,
): L4Authorization | undefined => {
  if (serviceAccounts.length === 0) return undefined
  const name = waypointPolicyName(waypointNamespace, waypointName)
  return {
    key: `${waypointNamespace}/${name}`,
    scope: "WORKLOAD_SELECTOR",
    matchLabels: {},
    namespace: waypointNamespace,
    message: {
      name,
      namespace: waypointNamespace,
      scope: "WORKLOAD_SELECTOR",
      action: "ALLOW",
      groups: [
        {
          rules: [
            {
              matches: [
                {
                  principals: [...serviceAccounts]
                    .sort()
                    .map((sa) => ({ exact: `${trustDomain}/ns/${waypointNamespace}/sa/${sa}` })),
                },
              ],
            },
          ],
        },
      ],
    },
  }
}
