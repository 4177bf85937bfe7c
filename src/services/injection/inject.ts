/**
 * The pure sidecar injector: one pod (or a workload's pod template) in, the injected pod or the
 * reason it is left alone (Skipped) or cannot be injected as asked (Refused) out. Never throws:
 * the webhook and `meshctl orch-inject` turn the outcome into an admission response or output.
 */
import { Either } from "effect"
import { asObject, asObjects, isObject, type Obj } from "../orchestrator/json.js"
import { assemblePod } from "./assemble.js"
import type { InjectionInput, InjectionOutcome } from "./contract.js"
import { applyCustomTemplates } from "./custom-templates.js"
import { injectionDecision } from "./decision.js"
import { podSettings } from "./pod-settings.js"
import { stripInjected } from "./reinjection.js"

export const injectPod = (input: InjectionInput): InjectionOutcome => {
  try {
    if (!isObject(input.pod) || asObjects(asObject(input.pod.spec).containers).length === 0) {
      return { _tag: "Refused", reason: "the pod has no spec.containers" }
    }
    const decision = injectionDecision(input)
    if (decision._tag === "Skip") return { _tag: "Skipped", reason: decision.reason, warnings: decision.warnings }
    // An injected pod is injected again from what it was before (reinjection.ts).
    const previous = stripInjected(input.pod as Obj)
    const stripped = { ...input, pod: previous.pod }
    const settings = podSettings(stripped)
    if (Either.isLeft(settings)) return { _tag: "Refused", reason: settings.left }
    const warnings = [...decision.warnings, ...settings.right.warnings]
    if (settings.right.templates.length === 0 && settings.right.customTemplates.length === 0) {
      return { _tag: "Skipped", reason: "no template is selected", warnings }
    }
    const assembled = assemblePod(stripped, settings.right, previous)
    if (assembled.refused !== undefined) return { _tag: "Refused", reason: assembled.refused }
    // The injector ConfigMap's own templates merge over the built-in ones' result.
    const custom = applyCustomTemplates(stripped, settings.right, assembled.pod)
    if (Either.isLeft(custom)) return { _tag: "Refused", reason: custom.left }
    return { _tag: "Injected", pod: custom.right, warnings: [...warnings, ...assembled.warnings] }
  } catch (error) {
    // A defect, not an input problem; the webhook still answers instead of failing the request.
    return {
      _tag: "Refused",
      reason: `internal injector error: ${error instanceof Error ? error.message : String(error)}`,
    }
  }
}
