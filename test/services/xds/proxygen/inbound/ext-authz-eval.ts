/**
 * Whether the proxy asks the external authorizer about a request (HTTP filters) or connection
 * (network filters), following its documented behaviour: an RBAC filter with shadow rules
 * enforces nothing, and when a shadow policy matches it writes that policy's id under
 * `<shadow_rules_stat_prefix>shadow_effective_policy_id` in its dynamic metadata (namespace: the
 * filter's name); an ext_authz filter with `filter_enabled_metadata` runs only when that
 * metadata value matches. The shadow rules are evaluated with the shared RBAC evaluator.
 */
import { arr, type Obj, obj, str, stringMatches } from "../../../../support/proxygen/matchers.js"
import { evaluateRbac, type RbacContext } from "../../../../support/proxygen/rbac-eval.js"

const EXT_AUTHZ_TYPES = [
  "type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz",
  "type.googleapis.com/envoy.extensions.filters.network.ext_authz.v3.ExtAuthz",
]

/** The first ext_authz filter of the chain that runs for `ctx`; undefined when none does. */
export const consultedExtAuthz = (filters: ReadonlyArray<Obj>, ctx: RbacContext): Obj | undefined => {
  const metadata = new Map<string, Map<string, string>>()
  for (const filter of filters) {
    const config = obj(filter.typed_config) ?? {}
    const shadow = obj(config.shadow_rules)
    if (shadow !== undefined) {
      const decision = evaluateRbac({ rules: shadow }, ctx)
      if (decision.policy !== undefined) {
        const name = String(filter.name)
        const values = metadata.get(name) ?? new Map<string, string>()
        values.set(`${str(config.shadow_rules_stat_prefix) ?? ""}shadow_effective_policy_id`, decision.policy)
        metadata.set(name, values)
      }
      continue
    }
    if (!EXT_AUTHZ_TYPES.includes(str(config["@type"]) ?? "")) continue
    const enabled = obj(config.filter_enabled_metadata)
    if (enabled === undefined) return filter
    const key = str(arr(enabled.path)[0]?.key) ?? ""
    const value = metadata.get(str(enabled.filter) ?? "")?.get(key)
    if (value !== undefined && stringMatches(obj(obj(enabled.value)?.string_match), value)) return filter
  }
  return undefined
}
