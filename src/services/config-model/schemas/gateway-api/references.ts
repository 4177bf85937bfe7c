/**
 * References between Gateway-API objects: a route's parents, its backends, a listener's
 * certificates, the kinds of route a listener allows, and label selectors.
 */
import { Schema } from "effect"
import { checked, Enum, Labels, labelKeyProblem, labelValueProblem, opt, type Report, StringList } from "../common.js"
import { Group, Kind, listOf, Namespace, ObjectName, Port, SectionName, Weight } from "./names.js"

/** Upstream allows 32 parents per route. */
const MAX_PARENT_REFS = 32

export const ParentReference = Schema.Struct({
  group: opt(Group),
  kind: opt(Kind),
  namespace: opt(Namespace),
  name: ObjectName,
  sectionName: opt(SectionName),
  port: opt(Port),
})
type ParentReference = typeof ParentReference.Type

const parentIdentity = (ref: ParentReference): string =>
  `${ref.group ?? "gateway.networking.k8s.io"}/${ref.kind ?? "Gateway"}/${ref.namespace ?? ""}/${ref.name}`

/**
 * A route may name one parent several times only to attach to different parts of it: each such
 * reference must give a sectionName or a port, and no two may give the same ones.
 */
const parentRefsProblems = (refs: ReadonlyArray<ParentReference>, report: Report) => {
  const byParent = new Map<string, Array<number>>()
  refs.forEach((ref, i) => {
    const key = parentIdentity(ref)
    byParent.set(key, [...(byParent.get(key) ?? []), i])
  })
  for (const indexes of byParent.values()) {
    if (indexes.length < 2) continue
    const seen = new Set<string>()
    for (const i of indexes) {
      const ref = refs[i] as ParentReference
      if (ref.sectionName === undefined && ref.port === undefined) {
        report([i], `parent ${ref.name} is referenced more than once: each reference must set sectionName or port`)
        continue
      }
      const part = `${ref.sectionName ?? ""}:${ref.port ?? ""}`
      if (seen.has(part)) {
        report([i], `parent ${ref.name} is referenced more than once with the same sectionName and port`)
      }
      seen.add(part)
    }
  }
}

export const ParentRefs = listOf(ParentReference, { max: MAX_PARENT_REFS }).pipe(checked(parentRefsProblems))

/** The backend fields every backend reference has. */
export const backendObjectFields = {
  group: opt(Group),
  kind: opt(Kind),
  name: ObjectName,
  namespace: opt(Namespace),
  port: opt(Port),
}

/** A Service (the default kind of the core group) can only be reached at a port. */
export const backendPortProblem = (
  ref: { readonly group?: string; readonly kind?: string; readonly port?: number },
  report: Report,
) => {
  if ((ref.group ?? "") === "" && (ref.kind ?? "Service") === "Service" && ref.port === undefined) {
    report(["port"], "port is required for a Service backend")
  }
}

/** The backend of a request mirror: no weight, no filters. */
export const BackendObjectReference = Schema.Struct(backendObjectFields).pipe(checked(backendPortProblem))

/** A weighted backend of a TCPRoute or TLSRoute rule. */
export const BackendRef = Schema.Struct({ ...backendObjectFields, weight: opt(Weight) }).pipe(
  checked(backendPortProblem),
)

export const SecretObjectReference = Schema.Struct({
  group: opt(Group),
  kind: opt(Kind),
  name: ObjectName,
  namespace: opt(Namespace),
})

export const RouteGroupKind = Schema.Struct({ group: opt(Group), kind: Kind })

const SelectorOperator = Enum("In", "NotIn", "Exists", "DoesNotExist")

/** An orchestrator label selector: matchLabels and matchExpressions, as the API server checks them. */
export const LabelSelector = Schema.Struct({
  matchLabels: opt(Labels),
  matchExpressions: opt(
    Schema.Array(
      Schema.Struct({ key: Schema.String, operator: SelectorOperator, values: opt(StringList) }).pipe(
        checked((expression, report) => {
          const keyProblem = labelKeyProblem(expression.key)
          if (keyProblem !== undefined) report(["key"], keyProblem)
          const values = expression.values ?? []
          const operator: string = expression.operator
          // An unknown operator is reported by the operator's own check.
          if (!["In", "NotIn", "Exists", "DoesNotExist"].includes(operator)) return
          const needsValues = expression.operator === "In" || expression.operator === "NotIn"
          if (needsValues && values.length === 0) {
            report(["values"], `must be set when operator is ${expression.operator}`)
          }
          if (!needsValues && values.length > 0) {
            report(["values"], `must be empty when operator is ${expression.operator}`)
          }
          values.forEach((value, i) => {
            const problem = labelValueProblem(value)
            if (problem !== undefined) report(["values", i], problem)
          })
        }),
      ),
    ),
  ),
})
