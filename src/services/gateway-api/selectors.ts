/**
 * Label selectors (`matchLabels` and `matchExpressions`) against a namespace's labels, as the
 * orchestrator evaluates them; every namespace carries `kubernetes.io/metadata.name` (the
 * orchestrator's API server sets it), so a selector may name a namespace by it.
 */
import type { LabelSelector } from "../config-model/schemas/gateway-api/types.js"

export const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

export const namespaceLabelsOf = (
  namespaceLabels: ReadonlyMap<string, Readonly<Record<string, string>>>,
  namespace: string,
): Readonly<Record<string, string>> => ({ [NAMESPACE_NAME_LABEL]: namespace, ...namespaceLabels.get(namespace) })

export const selectorMatches = (selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean => {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (labels[key] !== value) return false
  for (const expression of selector.matchExpressions ?? []) {
    const value = labels[expression.key]
    const values = expression.values ?? []
    const ok =
      expression.operator === "In"
        ? value !== undefined && values.includes(value)
        : expression.operator === "NotIn"
          ? value === undefined || !values.includes(value)
          : expression.operator === "Exists"
            ? value !== undefined
            : value === undefined
    if (!ok) return false
  }
  return true
}
