/**
 * AuthorizationPolicies, as the reference's auth.AuthorizationPoliciesAnalyzer checks them: a
 * policy must apply to some mesh workload (MSH0127): one in the root namespace with a selector
 * must match a mesh pod of any namespace; elsewhere, without a selector its namespace must have
 * a mesh pod, with one a mesh pod of its namespace must match it (pods in the mesh: in-mesh.ts).
 * And every namespace a rule's source names (`namespaces`, `notNamespaces`; `*`, `prefix*`,
 * `*suffix` patterns) must match an analyzed Namespace (MSH0101).
 */
import type { Analyzer } from "../analyzer.js"
import { MessageTypes } from "../message-types.js"
import {
  arr,
  type Entry,
  groupBy,
  type Message,
  message,
  rec,
  type Snapshot,
  selects,
  stringMap,
  strs,
} from "../snapshot.js"
import { namespaceInjection, podInAmbient, podInMesh } from "./in-mesh.js"
import { selectorString } from "./workload-selectors.js"

/** Whether a namespace name matches a source pattern (case-insensitive as the reference compares). */
export const namespaceMatches = (namespace: string, pattern: string): boolean => {
  if (pattern === "*") return true
  if (pattern.startsWith("*")) return namespace.endsWith(pattern.slice(1))
  if (pattern.endsWith("*")) return namespace.startsWith(pattern.slice(0, -1))
  return namespace.toLowerCase() === pattern.toLowerCase()
}

const noMatchingWorkloads = (policy: Entry, labels: string) =>
  message(
    MessageTypes.NoMatchingWorkloadsFound,
    policy,
    `No matching workloads for this resource with the following labels: ${labels}`,
  )

const authorizationPolicies = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const injection = namespaceInjection(snapshot)
  const meshPods = snapshot.ofKind("Pod", "").filter((p) => podInMesh(p, injection) || podInAmbient(p))
  const byNamespace = groupBy(meshPods, (p) => p.namespace)
  const namespaces = snapshot.ofKind("Namespace", "").map((n) => n.name)
  const root = snapshot.meshConfig.rootNamespace
  const out: Array<Message> = []
  for (const policy of snapshot.ofKind("AuthorizationPolicy")) {
    const selector = policy.body.selector
    const hasSelector = selector !== undefined && selector !== null
    const labels = stringMap(rec(selector).matchLabels)
    if (policy.namespace === root) {
      if (hasSelector && !meshPods.some((p) => selects(labels, p.labels)))
        out.push(noMatchingWorkloads(policy, selectorString(labels)))
    } else if (!hasSelector) {
      if ((byNamespace.get(policy.namespace) ?? []).length === 0) out.push(noMatchingWorkloads(policy, ""))
    } else if (!(byNamespace.get(policy.namespace) ?? []).some((p) => selects(labels, p.labels)))
      out.push(noMatchingWorkloads(policy, selectorString(labels)))

    arr(policy.body.rules).forEach((rule, i) => {
      arr(rec(rule).from).forEach((from, j) => {
        const source = rec(rec(from).source)
        for (const field of ["namespaces", "notNamespaces"])
          strs(source[field]).forEach((pattern, k) => {
            if (namespaces.some((n) => namespaceMatches(n, pattern))) return
            out.push(
              message(MessageTypes.ReferencedResourceNotFound, policy, `Referenced namespace not found: "${pattern}"`, [
                "spec",
                "rules",
                i,
                "from",
                j,
                "source",
                field,
                k,
              ]),
            )
          })
      })
    })
  }
  return out
}

export const authorizationPolicyAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "auth.AuthorizationPoliciesAnalyzer",
    description: "Checks the validity of authorization policies",
    types: [MessageTypes.NoMatchingWorkloadsFound, MessageTypes.ReferencedResourceNotFound],
    run: authorizationPolicies,
  },
]
