/**
 * The injector config's `alwaysInjectSelector` / `neverInjectSelector` entries: orchestrator
 * label selectors (matchLabels, matchExpressions with In / NotIn / Exists / DoesNotExist) over
 * the pod's labels. As in the reference, an empty selector selects nothing here (it would
 * otherwise force or forbid injection for every pod), and an invalid one is skipped with a warning.
 */
import { Either } from "effect"
import { asArray, asObject, isObject, type Obj } from "../orchestrator/json.js"

interface Requirement {
  readonly key: string
  readonly operator: "In" | "NotIn" | "Exists" | "DoesNotExist"
  readonly values: ReadonlyArray<string>
}

export interface ParsedSelector {
  readonly requirements: ReadonlyArray<Requirement>
}

const OPERATORS = new Set(["In", "NotIn", "Exists", "DoesNotExist"])

export const parseLabelSelector = (raw: unknown): Either.Either<ParsedSelector, string> => {
  if (!isObject(raw)) return Either.left("a label selector must be a mapping")
  const requirements: Array<Requirement> = []
  for (const [key, value] of Object.entries(asObject(raw.matchLabels))) {
    if (typeof value !== "string") return Either.left(`matchLabels.${key} must be a string`)
    requirements.push({ key, operator: "In", values: [value] })
  }
  if (raw.matchExpressions !== undefined && !Array.isArray(raw.matchExpressions)) {
    return Either.left("matchExpressions must be a list")
  }
  for (const [i, entry] of asArray(raw.matchExpressions).entries()) {
    const e: Obj = asObject(entry)
    const operator = e.operator
    if (typeof e.key !== "string" || e.key === "") return Either.left(`matchExpressions[${i}].key is required`)
    if (typeof operator !== "string" || !OPERATORS.has(operator)) {
      return Either.left(`matchExpressions[${i}].operator must be In, NotIn, Exists or DoesNotExist`)
    }
    const values = asArray(e.values)
    if (!values.every((v) => typeof v === "string")) return Either.left(`matchExpressions[${i}].values must be strings`)
    if ((operator === "In" || operator === "NotIn") && values.length === 0) {
      return Either.left(`matchExpressions[${i}]: ${operator} needs at least one value`)
    }
    if ((operator === "Exists" || operator === "DoesNotExist") && values.length > 0) {
      return Either.left(`matchExpressions[${i}]: ${operator} takes no values`)
    }
    requirements.push({ key: e.key, operator: operator as Requirement["operator"], values: values as Array<string> })
  }
  return Either.right({ requirements })
}

const requirementMatches = (r: Requirement, labels: Readonly<Record<string, string>>): boolean => {
  const value = Object.hasOwn(labels, r.key) ? labels[r.key] : undefined
  switch (r.operator) {
    case "In":
      return value !== undefined && r.values.includes(value)
    case "NotIn":
      return value === undefined || !r.values.includes(value)
    case "Exists":
      return value !== undefined
    case "DoesNotExist":
      return value === undefined
  }
}

/** An empty selector matches nothing (the reference skips empty selectors). */
export const selectorMatches = (selector: ParsedSelector, labels: Readonly<Record<string, string>>): boolean =>
  selector.requirements.length > 0 && selector.requirements.every((r) => requirementMatches(r, labels))

/** The index of the first selector of the list that matches, with warnings for invalid entries. */
export const firstMatching = (
  selectors: ReadonlyArray<unknown>,
  labels: Readonly<Record<string, string>>,
  listName: string,
): { readonly index: number | undefined; readonly warnings: ReadonlyArray<string> } => {
  const warnings: Array<string> = []
  for (const [index, raw] of selectors.entries()) {
    const parsed = parseLabelSelector(raw)
    if (Either.isLeft(parsed)) {
      warnings.push(`${listName}[${index}] ignored: ${parsed.left}`)
      continue
    }
    if (selectorMatches(parsed.right, labels)) return { index, warnings }
  }
  return { index: undefined, warnings }
}
