/**
 * XBackendTrafficPolicy → traffic policy of its target Services, and the policy's status, as the
 * reference: `retryConstraint` becomes the retry budget (percent as given, the budget interval
 * as given or the Gateway API's 10s, the minimum retry concurrency from `minRetryRate.count` or
 * the Gateway API's 10); the load balancer is the default one. `sessionPersistence` is accepted
 * but not applied, and the Accepted message says so. A target must be a Service of the policy's
 * namespace (TargetNotFound otherwise). Ancestors are the targets only (mesh controller).
 */
import type { ConfigResource } from "../config-model/resource.js"
import type { XBackendTrafficPolicySpec } from "../config-model/schemas/gateway-api/backend-policies.js"
import { humanJoin } from "./addresses.js"
import type { BackendPolicy, PolicyContext } from "./backend-tls-policy.js"
import { Reason } from "./conditions.js"
import { GatewayApiKind, type ResourceStatus } from "./model.js"
import {
  type AncestorStatus,
  MESH_CONTROLLER_NAME,
  type PolicyCondition,
  policyConditions,
  policyStatuses,
  resolveLocalRef,
  targetAncestor,
} from "./policy-targets.js"

type Policy = ConfigResource<XBackendTrafficPolicySpec>

/** The Gateway API's defaults of a retry budget. */
const DEFAULT_BUDGET_INTERVAL = "10s"
const DEFAULT_MIN_RETRY_CONCURRENCY = 10

/** A Gateway-API duration (`1h30m`, `500ms`) in the mesh's form (`5400s`, `0.500s`); undefined if not one. */
export const gatewayDurationSeconds = (text: string): string | undefined => {
  const parts = [...text.matchAll(/(\d+)(ms|h|m|s)/g)]
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== text) return undefined
  const unit = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 } as const
  const millis = parts.reduce((sum, p) => sum + Number(p[1]) * unit[p[2] as keyof typeof unit], 0)
  return millis % 1000 === 0 ? `${millis / 1000}s` : `${(millis / 1000).toFixed(3)}s`
}

const retryBudgetOf = (spec: XBackendTrafficPolicySpec): BackendPolicy["retryBudget"] => {
  const constraint = spec.retryConstraint
  if (constraint === undefined) return undefined
  const percent = constraint.budget?.percent
  const interval = constraint.budget?.interval
  return {
    ...(percent !== undefined ? { percent: { value: percent } } : {}),
    budgetInterval: (interval !== undefined ? gatewayDurationSeconds(interval) : undefined) ?? DEFAULT_BUDGET_INTERVAL,
    minRetryConcurrency:
      constraint.minRetryRate !== undefined
        ? (constraint.minRetryRate.count ?? DEFAULT_MIN_RETRY_CONCURRENCY)
        : DEFAULT_MIN_RETRY_CONCURRENCY,
  }
}

export const convertBackendTrafficPolicies = (
  all: ReadonlyArray<Policy>,
  ctx: PolicyContext,
): { readonly policies: ReadonlyArray<BackendPolicy>; readonly statuses: ReadonlyArray<ResourceStatus> } => {
  const policies: Array<BackendPolicy> = []
  const statuses = policyStatuses(GatewayApiKind.XBackendTrafficPolicy, all, ctx.now, (policy, cctx) => {
    const ns = policy.meta.namespace
    const unsupported = policy.spec.sessionPersistence !== undefined ? ["sessionPersistence"] : []
    const accepted: PolicyCondition = {
      type: "Accepted",
      reason: Reason.Accepted,
      message:
        unsupported.length > 0
          ? `Configuration is valid, but the mesh does not support the following fields: ${humanJoin(unsupported)}`
          : "Configuration is valid",
    }
    const retryBudget = retryBudgetOf(policy.spec)
    const ancestors: Array<AncestorStatus> = []
    for (const ref of policy.spec.targetRefs) {
      const resolved = resolveLocalRef(ref, ns, ctx.services, ctx.objects, ctx.domainSuffix)
      const target = "error" in resolved ? undefined : resolved.target
      if ("error" in resolved || target?.target.kind !== "Service") {
        const error = "error" in resolved ? resolved.error : `unsupported reference kind: ${ref.kind}`
        accepted.problem = { reason: "TargetNotFound", message: `targetRefs invalid: ${error}` }
      } else {
        policies.push({
          source: { kind: GatewayApiKind.XBackendTrafficPolicy, namespace: ns, name: policy.meta.name },
          created: policy.meta.creationTimestamp ?? "",
          target: target.target,
          host: target.hosts[0]!,
          loadBalancer: {},
          ...(retryBudget !== undefined ? { retryBudget } : {}),
        })
      }
      ancestors.push({
        ancestorRef: targetAncestor(ref),
        controllerName: MESH_CONTROLLER_NAME,
        conditions: policyConditions(cctx, [accepted]),
      })
    }
    return ancestors
  })
  return { policies, statuses }
}
