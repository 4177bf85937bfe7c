/**
 * BackendTLSPolicy → upstream TLS of its targets, and the policy's status, as the reference:
 * - TLS is SIMPLE with `validation.hostname` as SNI and the SANs given; the CA is the system's
 *   (`wellKnownCACertificates: System`, no credential) or the first `caCertificateRefs` entry,
 *   a ConfigMap of the policy's namespace holding `ca.crt` or `cacert` (credential
 *   `configmap://<ns>/<name>`). A CA reference that is missing, of another kind or without
 *   those keys fails ResolvedRefs (InvalidCACertificateRef / InvalidKind) and Accepted
 *   (NoValidCACertificate), and the TLS names the credential `invalid://`, so traffic to the
 *   backend fails rather than going out unverified.
 * - Each target is a Service or ServiceEntry of the namespace (a `sectionName` must name one of
 *   its ports); one that is not fails Accepted with TargetNotFound. Two policies on the same
 *   target (and sectionName): the older wins (then the name), the other is Conflicted.
 * - Ancestors: each target (mesh controller), then each Gateway whose routes reach a target
 *   (gateway controller). As the reference, a failed condition stays failed for the targets and
 *   Gateways after it.
 */
import type { ConfigResource } from "../config-model/resource.js"
import type { ClientTLSSettings } from "../config-model/schemas/destination-rule.js"
import type { BackendTLSPolicySpec } from "../config-model/schemas/gateway-api/backend-policies.js"
import { CONFIG_MAP_SCHEME } from "../credentials/credential.js"
import type { ServiceIndex } from "./backends.js"
import { Reason } from "./conditions.js"
import { byAge, compareStrings, GatewayApiKind, type ResourceStatus } from "./model.js"
import {
  type AncestorStatus,
  type BackendTarget,
  gatewayAncestor,
  MESH_CONTROLLER_NAME,
  type PolicyCondition,
  policyConditions,
  policyIgnored,
  policyStatuses,
  resolveLocalRef,
  targetAncestor,
  targetKey,
} from "./policy-targets.js"
import type { TlsObjects } from "./tls-objects.js"

type Tls = typeof ClientTLSSettings.Type
type Policy = ConfigResource<BackendTLSPolicySpec>
type TargetRef = BackendTLSPolicySpec["targetRefs"][number]

/** A credential no proxy is given: TLS with it fails (the reference's `invalid://`). */
export const INVALID_CREDENTIAL = "invalid://"

/** One policy's setting for one host of one target (merged per host into DestinationRules). */
export interface BackendPolicy {
  readonly source: { readonly kind: string; readonly namespace: string; readonly name: string }
  readonly created: string
  readonly target: BackendTarget
  readonly host: string
  /** Port-level: a named port (sectionName) resolved to its number. */
  readonly port?: number
  readonly tls?: Tls
  readonly loadBalancer?: Record<string, never>
  readonly retryBudget?: {
    readonly percent?: { readonly value: number }
    readonly budgetInterval: string
    readonly minRetryConcurrency: number
  }
}

export interface PolicyContext {
  readonly services: ServiceIndex
  readonly objects: TlsObjects | undefined
  readonly domainSuffix: string
  readonly controllerName: string
  readonly now: string
  /** `targetKey` → Gateways (`namespace/name`) whose routes reach it. */
  readonly gateways: ReadonlyMap<string, ReadonlySet<string>>
}

/** The reference's check of a CA bundle's keys (presence only). */
const caKeysProblem = (data: Readonly<Record<string, string>>): string | undefined => {
  for (const key of ["cacert", "ca.crt"]) if ((data[key] ?? "") !== "") return undefined
  for (const key of ["cacert", "ca.crt"]) if (key in data) return `found key "${key}", but it was empty`
  const keys = Object.keys(data).sort()
  const found = keys.length < 3 ? keys.join(", ") : `${keys.slice(0, 3).join(", ")}, and ${keys.length - 3} more...`
  return `found secret, but didn't have expected keys cacert or ca.crt; found: ${found}`
}

/** The credential of `validation`, recording what is wrong in the conditions. */
const credentialOf = (
  policy: Policy,
  accepted: PolicyCondition,
  resolvedRefs: PolicyCondition,
  ctx: PolicyContext,
): string | undefined => {
  const validation = policy.spec.validation
  const wellKnown = validation.wellKnownCACertificates
  if (wellKnown !== undefined && wellKnown !== "") {
    if (wellKnown !== "System")
      accepted.problem = { reason: Reason.Invalid, message: `Unknown wellKnownCACertificates: ${wellKnown}` }
    return undefined
  }
  const refs = validation.caCertificateRefs ?? []
  const ref = refs[0]
  if (ref === undefined) return undefined
  if (refs.length > 1) accepted.message += "; warning: only the first caCertificateRefs will be used"
  const ns = policy.meta.namespace
  const resolved = resolveLocalRef(ref, ns, ctx.services, ctx.objects, ctx.domainSuffix)
  let error: string
  if ("error" in resolved) {
    error = resolved.error
    resolvedRefs.problem = error.startsWith("unsupported kind")
      ? { reason: Reason.InvalidKind, message: `Certificate reference not supported: ${error}` }
      : { reason: Reason.InvalidCACertificateRef, message: `Certificate reference not found: ${error}` }
  } else if (resolved.kind === "ConfigMap") {
    const data = ctx.objects?.configMaps.get(`${ns}/${ref.name}`)
    const problem = data === undefined ? undefined : caKeysProblem(data)
    if (problem === undefined) return `${CONFIG_MAP_SCHEME}${ns}/${ref.name}`
    error = problem
    resolvedRefs.problem = { reason: Reason.InvalidCACertificateRef, message: `Certificate invalid: ${error}` }
  } else {
    // Secrets are not supported as CA references (only ConfigMaps are core).
    error = `unsupported reference kind: ${ref.kind}`
    resolvedRefs.problem = { reason: Reason.InvalidKind, message: `Certificate reference invalid: ${error}` }
  }
  accepted.problem = { reason: Reason.NoValidCACertificate, message: `Certificate reference invalid: ${error}` }
  return INVALID_CREDENTIAL
}

const sameTargetRef = (a: TargetRef, b: TargetRef): boolean =>
  a.group === b.group && a.kind === b.kind && a.name === b.name && (a.sectionName ?? "") === (b.sectionName ?? "")

/** The older policy (then the lower name) of the same namespace on the same target, if any. */
const conflictingPolicy = (policy: Policy, ref: TargetRef, all: ReadonlyArray<Policy>): Policy | undefined =>
  all.find(
    (other) =>
      other !== policy &&
      other.meta.namespace === policy.meta.namespace &&
      other.spec.targetRefs.some((t) => sameTargetRef(ref, t)) &&
      byAge(other, policy) < 0,
  )

/** A section's port on the target, or the problem. */
const sectionProblem = (
  ref: TargetRef,
  target: { readonly ports: ReadonlyArray<{ readonly name: string }> },
  namespace: string,
): string | undefined => {
  const section = ref.sectionName ?? ""
  if (section === "" || target.ports.some((p) => p.name === section)) return undefined
  const kind = ref.kind === "ServiceEntry" ? "ServiceEntry" : "Service"
  return `sectionName "${section}" does not exist in ${kind} ${namespace}/${ref.name}`
}

export interface ConvertedTlsPolicies {
  readonly policies: ReadonlyArray<BackendPolicy>
  readonly statuses: ReadonlyArray<ResourceStatus>
}

export const convertBackendTlsPolicies = (all: ReadonlyArray<Policy>, ctx: PolicyContext): ConvertedTlsPolicies => {
  const active = all.filter((p) => !policyIgnored(p))
  const policies: Array<BackendPolicy> = []
  const statuses = policyStatuses(GatewayApiKind.BackendTLSPolicy, all, ctx.now, (policy, cctx) => {
    const ns = policy.meta.namespace
    const accepted: PolicyCondition = { type: "Accepted", reason: Reason.Accepted, message: "Configuration is valid" }
    const resolvedRefs: PolicyCondition = {
      type: "ResolvedRefs",
      reason: Reason.ResolvedRefs,
      message: "Configuration is valid",
    }
    const validation = policy.spec.validation
    const credential = credentialOf(policy, accepted, resolvedRefs, ctx)
    const sans = (validation.subjectAltNames ?? []).flatMap((san) =>
      san.type === "Hostname" ? [san.hostname ?? ""] : [san.uri ?? ""],
    )
    const tls: Tls = {
      mode: "SIMPLE",
      ...(credential !== undefined ? { credentialName: credential } : {}),
      sni: validation.hostname,
      ...(sans.length > 0 ? { subjectAltNames: sans } : {}),
    }
    const ancestors: Array<AncestorStatus> = []
    const gateways = new Set<string>()
    const conditions = () => policyConditions(cctx, [accepted, resolvedRefs])
    policy.spec.targetRefs.forEach((ref) => {
      const resolved = resolveLocalRef(ref, ns, ctx.services, ctx.objects, ctx.domainSuffix)
      const error =
        "error" in resolved
          ? resolved.error
          : resolved.target === undefined
            ? `unsupported reference kind: ${ref.kind}`
            : sectionProblem(ref, resolved.target, ns)
      if (error !== undefined || !("kind" in resolved) || resolved.target === undefined) {
        accepted.problem = { reason: "TargetNotFound", message: `targetRefs invalid: ${error}` }
      } else {
        const target = resolved.target
        const winner = conflictingPolicy(policy, ref, active)
        if (winner !== undefined) {
          accepted.problem = {
            reason: "Conflicted",
            message: `Conflicts with BackendTLSPolicy "${winner.meta.name}" targeting the same backend`,
          }
        } else {
          const section = ref.sectionName ?? ""
          const port = section === "" ? undefined : target.ports.find((p) => p.name === section)?.number
          for (const host of target.hosts)
            policies.push({
              source: { kind: GatewayApiKind.BackendTLSPolicy, namespace: ns, name: policy.meta.name },
              created: policy.meta.creationTimestamp ?? "",
              target: target.target,
              host,
              ...(port !== undefined ? { port } : {}),
              tls,
            })
        }
        for (const gateway of ctx.gateways.get(targetKey(target.target)) ?? []) gateways.add(gateway)
      }
      ancestors.push({
        ancestorRef: targetAncestor(ref),
        controllerName: MESH_CONTROLLER_NAME,
        conditions: conditions(),
      })
    })
    for (const gateway of [...gateways].sort(compareStrings))
      ancestors.push({
        ancestorRef: gatewayAncestor(gateway),
        controllerName: ctx.controllerName,
        conditions: conditions(),
      })
    return ancestors
  })
  return { policies, statuses }
}
