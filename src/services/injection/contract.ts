/**
 * Sidecar injection, the contract shared by the pure injector (services/injection), the
 * `/inject` webhook (layers/webhook) and `meshctl orch-inject` (programs/meshctl): one function
 * turns a pod (or a workload's pod template) into the injected pod, or says why it does not.
 *
 * The injection config is the reference's shape (the injector ConfigMap's `config` and `values`
 * keys): a policy, selectors, which templates apply by default, and values (images, resources,
 * proxy settings). The built-in templates are the mesh's own, selected by name (`sidecar`,
 * `gateway`, `grpc-agent`, `grpc-simple`, `init`): a ConfigMap text under one of those names is
 * not executed (reported once). A ConfigMap template of any other name is run through the
 * reference's template language (services/injection/template/) and merged into the pod.
 */
import type { ParsedTemplate } from "./template/index.js"

/** An orchestrator object as plain JSON (a Pod, or a workload's pod template as a Pod). */
export type Json = Readonly<Record<string, unknown>>

/** The injector ConfigMap's `config` key, parsed (the reference's field names). */
export interface InjectionConfig {
  /** `enabled` (inject unless a pod opts out) or `disabled` (only pods that opt in). */
  readonly policy: "enabled" | "disabled"
  /** Templates applied when the pod names none (`inject.mesh.io/templates`): usually `[sidecar]`. */
  readonly defaultTemplates: ReadonlyArray<string>
  /** Label selectors (matchLabels/matchExpressions) that force or forbid injection. */
  readonly alwaysInjectSelector: ReadonlyArray<Json>
  readonly neverInjectSelector: ReadonlyArray<Json>
  /** Annotations added to every injected pod. */
  readonly injectedAnnotations: Readonly<Record<string, string>>
  /** Template names the ConfigMap defines with its own text. */
  readonly customTemplates: ReadonlyArray<string>
  /**
   * The ConfigMap's templates of names other than the built-in ones, parsed: selected by name
   * like a built-in one, rendered over the pod and values and merged into the pod.
   */
  readonly executableTemplates?: Readonly<Record<string, ParsedTemplate>>
  /** Aliases: template name → the names it stands for. */
  readonly aliases: Readonly<Record<string, ReadonlyArray<string>>>
}

/** The injector ConfigMap's `values` key (the reference's Helm values), the fields the templates read. */
export type InjectionValues = Json

export interface InjectionInput {
  /** The pod as the API server (or the file) has it; never changed. */
  readonly pod: Json
  /** The pod's namespace and its labels (namespace injection label, revision label). */
  readonly namespace: { readonly name: string; readonly labels: Readonly<Record<string, string>> }
  readonly config: InjectionConfig
  readonly values: InjectionValues
  /** The mesh config (as parsed by services/mesh-config) as plain JSON: `defaultConfig` and the rest. */
  readonly meshConfig: Json
  /** The control plane's revision (`--revision`, `REVISION`); "" or "default" for the default one. */
  readonly revision: string
  /** `ENABLE_NATIVE_SIDECARS`: the proxy as an init container with `restartPolicy: Always`. */
  readonly nativeSidecars?: boolean
  /** The injector's `COMPLIANCE_POLICY` (e.g. `fips-140-3`), written into the proxy's environment. */
  readonly compliancePolicy?: string
  /** The workload's name and kind (and apiVersion) when known (orch-inject; the webhook derives it from owner refs). */
  readonly owner?: { readonly kind: string; readonly name: string; readonly apiVersion?: string }
  /**
   * Who asks (optional, added by the injector): `webhook` (default) applies the namespace labels
   * and the policy, as the reference's webhook selectors and policy check do; `orch-inject`
   * injects unless the pod opts out, as the reference's kube-inject does (namespace labels,
   * selectors and policy are not consulted there).
   */
  readonly mode?: "webhook" | "orch-inject"
}

export type InjectionOutcome =
  | {
      readonly _tag: "Injected"
      /** The whole pod after injection. */
      readonly pod: Json
      /** Things the user should know (a conflicting annotation ignored, a custom template not run). */
      readonly warnings: ReadonlyArray<string>
    }
  | {
      readonly _tag: "Skipped"
      /** Why: policy disabled, opted out, host network, already injected, ... (the reference's wording). */
      readonly reason: string
      readonly warnings: ReadonlyArray<string>
    }
  | {
      /** The pod cannot be injected as asked (an invalid annotation value): the webhook denies with this. */
      readonly _tag: "Refused"
      readonly reason: string
    }
