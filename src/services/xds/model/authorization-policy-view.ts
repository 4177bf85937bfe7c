/**
 * The model's view of an AuthorizationPolicy, made once per push from its decoded spec: the
 * selector, whether it is attached by targetRef, the action and CUSTOM provider, and each rule's
 * sources, operations and conditions with empty fields dropped. Every generator that enforces
 * policies (sidecar RBAC, proxyless gRPC RBAC, the node proxy's L4 authorizations) reads this.
 */
import type { AuthorizationPolicySpec } from "../../config-model/schemas/authorization-policy.js"

export type Fields = Readonly<Record<string, ReadonlyArray<string>>>

export interface AuthorizationCondition {
  readonly key: string
  readonly values: ReadonlyArray<string>
  readonly notValues: ReadonlyArray<string>
}

export interface AuthorizationRule {
  /** `from[].source`; empty = any source. */
  readonly from: ReadonlyArray<Fields>
  /** `to[].operation`; empty = any operation. */
  readonly to: ReadonlyArray<Fields>
  readonly when: ReadonlyArray<AuthorizationCondition>
}

export interface AuthorizationPolicyView {
  readonly name: string
  readonly namespace: string
  /** `selector.matchLabels`; undefined when the policy selects every workload in its scope. */
  readonly selector?: Readonly<Record<string, string>>
  /** Whether the policy uses `targetRef(s)` (gateway/waypoint attachment, not for gRPC servers). */
  readonly targeted: boolean
  readonly action: string
  /** CUSTOM: `provider.name`, the mesh config extension provider sidecars ask (gRPC servers skip CUSTOM). */
  readonly provider?: string
  readonly rules: ReadonlyArray<AuthorizationRule>
}

type Rule = NonNullable<AuthorizationPolicySpec["rules"]>[number]

/** The fields of a source/operation with at least one value; the values are alternatives. */
const fields = (section: Readonly<Record<string, ReadonlyArray<string> | undefined>> | undefined): Fields => {
  const out: Record<string, ReadonlyArray<string>> = {}
  for (const [k, values] of Object.entries(section ?? {}))
    if (values !== undefined && values.length > 0) out[k] = values
  return out
}

const rule = (spec: Rule): AuthorizationRule => ({
  from: (spec.from ?? []).map((f) => fields(f.source)),
  to: (spec.to ?? []).map((t) => fields(t.operation)),
  when: (spec.when ?? []).map((c) => ({ key: c.key, values: c.values ?? [], notValues: c.notValues ?? [] })),
})

export const authorizationPolicyView = (
  meta: { readonly name: string; readonly namespace: string },
  spec: AuthorizationPolicySpec,
): AuthorizationPolicyView => {
  const labels = spec.selector?.matchLabels ?? {}
  return {
    name: meta.name,
    namespace: meta.namespace,
    ...(Object.keys(labels).length > 0 ? { selector: labels } : {}),
    targeted: spec.targetRef !== undefined || (spec.targetRefs?.length ?? 0) > 0,
    // The schema defaults the action; a resource built by hand (tests, embedders) may leave it out.
    action: spec.action ?? "ALLOW",
    ...(spec.provider?.name !== undefined && spec.provider.name !== "" ? { provider: spec.provider.name } : {}),
    rules: (spec.rules ?? []).map(rule),
  }
}
