/**
 * `meshctl x authz check`: the AuthorizationPolicies a proxy enforces, read back from the RBAC
 * filters of its listeners (HTTP `envoy.filters.http.rbac` inside connection managers, network
 * `envoy.filters.network.rbac` in filter chains), `rules` and `shadow_rules` both.
 *
 * The control plane names each RBAC policy after the AuthorizationPolicy rule it came from
 * (src/services/xds/proxygen/inbound/authz.ts): `ns[<ns>]-policy[<name>]-rule[<i>]`, with a
 * `-from[<j>]` tail when a rule is split per source, and a `mesh-ext-authz-` lead for CUSTOM
 * policies (`istio-ext-authz-` in the reference's dumps). A row is one policy: its action, its
 * `<name>.<ns>`, and how many of its rules the proxy holds (split parts count once), merged
 * across listeners and chains.
 *
 * ACTION uses the AuthorizationPolicy words (AUDIT for the RBAC action LOG, CUSTOM for the
 * ext-authz policies, whatever RBAC action carries them), so the column reads like the policies
 * it names. Shadow policies other than CUSTOM ones never enforce (the reference's dry-run): they
 * show as `<ACTION> (dry-run)`. An RBAC config without policies (an ALLOW that allows nothing)
 * shows as the reference's `_anonymous_match_nothing_`. Names not in the control plane's form
 * (a fallback deny-all, another control plane) are shown as they are, one rule each.
 * No RBAC filter at all prints the header alone, as the reference does.
 */
import { asObject, asObjects, asString, type Json } from "./dump.js"

export type AuthzAction = "CUSTOM" | "DENY" | "ALLOW" | "AUDIT"

export interface AuthzRow {
  readonly action: string
  /** `<name>.<namespace>`, or the RBAC policy name when it is not in the control plane's form. */
  readonly policy: string
  readonly rules: number
}

/** One RBAC filter's config: enforced rules and shadow rules (either may be absent). */
export interface RbacConfig {
  readonly rules?: Json | undefined
  readonly shadowRules?: Json | undefined
}

export const ANONYMOUS_POLICY = "_anonymous_match_nothing_"

const HCM_NAMES = new Set(["envoy.filters.network.http_connection_manager", "envoy.http_connection_manager"])
const HTTP_RBAC = "envoy.filters.http.rbac"
const NETWORK_RBAC = "envoy.filters.network.rbac"
const typeTail = (config: Json | undefined) => asString(config?.["@type"]).split("/").pop() ?? ""

const isHcm = (filter: Json) =>
  HCM_NAMES.has(asString(filter.name)) || typeTail(asObject(filter.typed_config)).endsWith(".HttpConnectionManager")
const isRbac = (filter: Json, name: string, typeName: string) =>
  asString(filter.name) === name || typeTail(asObject(filter.typed_config)) === typeName

const rbacConfig = (filter: Json): RbacConfig => {
  const config = asObject(filter.typed_config) ?? {}
  return { rules: asObject(config.rules), shadowRules: asObject(config.shadow_rules) }
}

/** Every RBAC filter config of a listener, over its filter chains and its default chain. */
export const rbacConfigsOfListener = (listener: Json): ReadonlyArray<RbacConfig> => {
  const chains = [...asObjects(listener.filter_chains), ...asObjects([listener.default_filter_chain])]
  return chains.flatMap((chain) =>
    asObjects(chain.filters).flatMap((filter) => {
      if (isRbac(filter, NETWORK_RBAC, "envoy.extensions.filters.network.rbac.v3.RBAC")) return [rbacConfig(filter)]
      if (!isHcm(filter)) return []
      return asObjects(asObject(filter.typed_config)?.http_filters)
        .filter((http) => isRbac(http, HTTP_RBAC, "envoy.extensions.filters.http.rbac.v3.RBAC"))
        .map(rbacConfig)
    }),
  )
}

const POLICY_NAME = /^(?:(?:mesh|istio)-ext-authz-)?ns\[([^\]]*)\]-policy\[([^\]]*)\]-rule\[([^\]]*)\]/
const EXT_AUTHZ_LEAD = /^(?:mesh|istio)-ext-authz/

export interface ParsedPolicyName {
  /** `<name>.<namespace>`, or the whole name when it is not in the control plane's form. */
  readonly policy: string
  /** The rule it came from; the whole name for foreign names (each is its own rule). */
  readonly rule: string
  readonly custom: boolean
}

export const parsePolicyName = (name: string): ParsedPolicyName => {
  const custom = EXT_AUTHZ_LEAD.test(name)
  const m = POLICY_NAME.exec(name)
  return m === null ? { policy: name, rule: name, custom } : { policy: `${m[2]}.${m[1]}`, rule: m[3]!, custom }
}

/** The RBAC action of a rules block: an absent action is the enum's zero, ALLOW. */
const actionOf = (rules: Json): AuthzAction => {
  const action = asString(rules.action)
  return action === "DENY" ? "DENY" : action === "LOG" ? "AUDIT" : "ALLOW"
}

const ORDER: ReadonlyArray<AuthzAction> = ["CUSTOM", "DENY", "ALLOW", "AUDIT"]

/**
 * The rows of the RBAC configs, deduplicated, ordered as policies are evaluated (CUSTOM, DENY,
 * ALLOW, then AUDIT which never decides), enforced before dry-run, by name within an action.
 */
export const authzRows = (configs: ReadonlyArray<RbacConfig>): ReadonlyArray<AuthzRow> => {
  const found = new Map<string, { action: AuthzAction; dryRun: boolean; policy: string; rules: Set<string> }>()
  const add = (action: AuthzAction, dryRun: boolean, policy: string, rule: string) => {
    const key = JSON.stringify([action, dryRun, policy])
    const entry = found.get(key) ?? { action, dryRun, policy, rules: new Set<string>() }
    entry.rules.add(rule)
    found.set(key, entry)
  }
  const addBlock = (rules: Json | undefined, shadow: boolean) => {
    if (rules === undefined) return
    const action = actionOf(rules)
    const names = Object.keys(asObject(rules.policies) ?? {})
    if (names.length === 0) add(action, shadow, ANONYMOUS_POLICY, "0")
    for (const name of names) {
      const parsed = parsePolicyName(name)
      if (parsed.custom) add("CUSTOM", false, parsed.policy, parsed.rule)
      else add(action, shadow, parsed.policy, parsed.rule)
    }
  }
  for (const config of configs) {
    addBlock(config.rules, false)
    addBlock(config.shadowRules, true)
  }
  return [...found.values()]
    .sort(
      (a, b) =>
        ORDER.indexOf(a.action) - ORDER.indexOf(b.action) ||
        Number(a.dryRun) - Number(b.dryRun) ||
        (a.policy < b.policy ? -1 : a.policy > b.policy ? 1 : 0),
    )
    .map((e) => ({ action: e.dryRun ? `${e.action} (dry-run)` : e.action, policy: e.policy, rules: e.rules.size }))
}

/** The rows of every listener of a dump (listenersOf in dump.ts). */
export const authzRowsOfListeners = (listeners: ReadonlyArray<Json>): ReadonlyArray<AuthzRow> =>
  authzRows(listeners.flatMap(rbacConfigsOfListener))

// The reference's tabwriter: minimum width 0, padding 3, spaces; the last cell as is.
const PADDING = 3

/** `ACTION  AuthorizationPolicy  RULES` and one line per row. */
export const authzTable = (rows: ReadonlyArray<AuthzRow>): string => {
  const lines = [["ACTION", "AuthorizationPolicy", "RULES"], ...rows.map((r) => [r.action, r.policy, `${r.rules}`])]
  const widths = [0, 1].map((i) => Math.max(...lines.map((l) => l[i]!.length)) + PADDING)
  return lines.map((l) => `${l[0]!.padEnd(widths[0]!)}${l[1]!.padEnd(widths[1]!)}${l[2]}\n`).join("")
}
