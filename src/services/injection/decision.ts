/**
 * Whether a pod is injected, combining what the reference splits between its webhook
 * configuration's selectors (namespace and revision labels) and its injector's policy check.
 * The rules, first match wins:
 *
 *  1. `hostNetwork: true` → skipped: capture rules would change the node's own routing.
 *  2. A system namespace (kube-system, kube-public) → skipped.
 *  3. (An already injected pod is not skipped: it is injected again from what it was before,
 *     reinjection.ts, as the reference does, so that it gets today's templates.)
 *  4. Pod opt-out: label `sidecar.mesh.io/inject`, else the annotation of that name (the label
 *     wins when both are set), with any value other than y/yes/true/on → skipped.
 *  5. (webhook only) Namespace `mesh-injection=disabled` → skipped, even for a pod that opts in
 *     ("if either label is disabled, the pod is not injected"); any other value than `enabled`
 *     selects no revision → skipped.
 *  6. (webhook only) The serving revision: namespace `mesh-injection=enabled` → the default
 *     revision (it takes precedence over a revision label); else the namespace's `mesh.io/rev`;
 *     else the pod's `mesh.io/rev` label; else, for a pod whose *label* opts in, the default
 *     revision; else with values `sidecarInjectorWebhook.enableNamespacesByDefault` the default
 *     revision; else skipped (the reference's webhook is not even called: its object selector
 *     reads labels, so an opt-in annotation alone does not select the pod). A revision other than
 *     `input.revision` (`""` and `default` being the same) → skipped: another control plane injects it.
 *     Ambient (`mesh.io/dataplane-mode=ambient` on the pod, or on its namespace unless the pod says
 *     `none`) is not a label of its own here, exactly as in the reference, whose injector and
 *     webhook selectors never read it: an ambient pod gets no sidecar because nothing selects it
 *     (the skip reason says the node proxy serves it), and a sidecar label still wins over ambient
 *     (the reference's documented precedence: its CNI leaves pods with a sidecar out of ambient).
 *  7. Pod opt-in (label, else annotation, y/yes/true/on) → injected.
 *  8. (webhook only) `neverInjectSelector` matches the pod's labels → skipped; else
 *     `alwaysInjectSelector` matches → injected.
 *  9. Policy: `enabled` → injected; `disabled` → skipped. `orch-inject` injects here.
 *
 * Every spelling is also read under the reference's name (`sidecar.istio.io/inject`,
 * `istio-injection`, `istio.io/rev`); a conflicting pair uses the mesh spelling, with a warning.
 */

import { asObject, asStringMap } from "../orchestrator/json.js"
import { type AliasedReader, aliasedReader } from "./aliased-metadata.js"
import type { InjectionInput } from "./contract.js"
import { firstMatching } from "./label-selector.js"
import { AMBIENT_MODE, IGNORED_NAMESPACES, InjectAnnotations, InjectLabels } from "./names.js"
import { valuesView } from "./values.js"

export type Decision =
  | { readonly _tag: "Inject"; readonly why: string; readonly warnings: ReadonlyArray<string> }
  | { readonly _tag: "Skip"; readonly reason: string; readonly warnings: ReadonlyArray<string> }

const TRUE_VALUES = new Set(["y", "yes", "true", "on"])

/** "" and "default" both name the default revision. */
export const normalRevision = (revision: string): string => (revision === "" ? "default" : revision)

/** What puts a pod in ambient mode (the label naming it), or undefined: the pod's label, else its namespace's. */
const ambientBy = (pod: AliasedReader, namespace: AliasedReader): string | undefined => {
  const own = pod.get(InjectLabels.dataplaneMode)
  if (own !== undefined) return own.value === AMBIENT_MODE ? `pod label ${own.key}=${own.value}` : undefined
  const inherited = namespace.get(InjectLabels.dataplaneMode)
  return inherited?.value === AMBIENT_MODE ? `namespace label ${inherited.key}=${inherited.value}` : undefined
}

export const injectionDecision = (input: InjectionInput): Decision => {
  const metadata = asObject(input.pod.metadata)
  const spec = asObject(input.pod.spec)
  const podLabels = asStringMap(metadata.labels)
  const labelReader = aliasedReader(podLabels, "label")
  const annotationReader = aliasedReader(asStringMap(metadata.annotations), "annotation")
  const namespaceReader = aliasedReader(input.namespace.labels, "namespace label")
  const extraWarnings: Array<string> = []
  const warnings = () => [
    ...labelReader.warnings(),
    ...annotationReader.warnings(),
    ...namespaceReader.warnings(),
    ...extraWarnings,
  ]
  const skip = (reason: string): Decision => ({ _tag: "Skip", reason, warnings: warnings() })
  const inject = (why: string): Decision => ({ _tag: "Inject", why, warnings: warnings() })
  const webhook = (input.mode ?? "webhook") === "webhook"
  const namespace = input.namespace.name

  if (spec.hostNetwork === true) return skip("pod uses the host network (hostNetwork: true)")
  if (IGNORED_NAMESPACES.includes(namespace)) return skip(`namespace ${namespace} is a system namespace`)

  const injectLabel = labelReader.get(InjectLabels.inject)
  const injectChoice = injectLabel ?? annotationReader.get(InjectAnnotations.inject)
  const choiceKind = injectLabel !== undefined ? "label" : "annotation"
  const optedIn = injectChoice !== undefined && TRUE_VALUES.has(injectChoice.value.toLowerCase())
  if (injectChoice !== undefined && injectChoice.value !== "" && !optedIn) {
    return skip(`pod opted out of injection (${choiceKind} ${injectChoice.key}=${injectChoice.value})`)
  }

  if (webhook) {
    const namespaceInjection = namespaceReader.get(InjectLabels.namespaceInjection)
    if (namespaceInjection !== undefined && namespaceInjection.value !== "enabled") {
      return skip(
        namespaceInjection.value === "disabled"
          ? `namespace ${namespace} has injection disabled (${namespaceInjection.key}=disabled)`
          : `namespace ${namespace} label ${namespaceInjection.key}=${namespaceInjection.value} is neither enabled nor disabled`,
      )
    }
    const namespaceRevision = namespaceReader.get(InjectLabels.revision)
    const podRevision = labelReader.get(InjectLabels.revision)
    const labelOptIn = injectLabel !== undefined && optedIn
    const selected =
      namespaceInjection !== undefined
        ? { revision: "default", by: `namespace label ${namespaceInjection.key}=enabled` }
        : namespaceRevision !== undefined
          ? {
              revision: namespaceRevision.value,
              by: `namespace label ${namespaceRevision.key}=${namespaceRevision.value}`,
            }
          : podRevision !== undefined
            ? { revision: podRevision.value, by: `pod label ${podRevision.key}=${podRevision.value}` }
            : labelOptIn
              ? { revision: "default", by: `pod label ${injectLabel.key}=${injectLabel.value}` }
              : valuesView(input.values).enableNamespacesByDefault
                ? { revision: "default", by: "sidecarInjectorWebhook.enableNamespacesByDefault" }
                : undefined
    if (selected === undefined) {
      const ambient = ambientBy(labelReader, namespaceReader)
      if (ambient !== undefined) {
        return skip(`pod is in ambient mode (${ambient}): the node proxy serves it, no sidecar is injected`)
      }
      return skip(
        `namespace ${namespace} is not labelled for injection (${InjectLabels.namespaceInjection}=enabled or ${InjectLabels.revision}=<revision>) and the pod has no ${InjectLabels.inject}=true or ${InjectLabels.revision} label`,
      )
    }
    if (normalRevision(selected.revision) !== normalRevision(input.revision)) {
      return skip(
        `pod is served by revision "${normalRevision(selected.revision)}" (${selected.by}), not by this control plane's revision "${normalRevision(input.revision)}"`,
      )
    }
  }

  if (optedIn) return inject(`pod opted in (${choiceKind} ${injectChoice.key}=${injectChoice.value})`)

  if (!webhook) return inject("orch-inject injects every pod that does not opt out")

  const never = firstMatching(input.config.neverInjectSelector, podLabels, "neverInjectSelector")
  extraWarnings.push(...never.warnings)
  if (never.index !== undefined) return skip(`pod labels match neverInjectSelector[${never.index}]`)
  const always = firstMatching(input.config.alwaysInjectSelector, podLabels, "alwaysInjectSelector")
  extraWarnings.push(...always.warnings)
  if (always.index !== undefined) return inject(`pod labels match alwaysInjectSelector[${always.index}]`)

  return input.config.policy === "enabled"
    ? inject("injection policy is enabled")
    : skip("injection policy is disabled and the pod does not opt in (sidecar.mesh.io/inject=true)")
}
