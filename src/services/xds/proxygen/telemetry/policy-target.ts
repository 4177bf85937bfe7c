/**
 * Whether a workload policy (Telemetry, WasmPlugin) attaches to a proxy, as the reference decides
 * it: a `selector` picks workloads by label; `targetRef`/`targetRefs` pick Gateway-API gateways by
 * name (their pods carry the `gateway.networking.k8s.io/gateway-name` label) and, when set,
 * replace the selector. The namespace rules (root namespace, the proxy's own) are the caller's.
 */
import type { ProxyView } from "../proxy-view.js"
import { matchesLabels } from "../scope.js"

/** The label the Gateway-API deployment controller puts on a gateway's pods. */
export const GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name"
const GATEWAY_API_GROUP = "gateway.networking.k8s.io"

interface TargetRef {
  readonly group?: string | undefined
  readonly kind: string
  readonly name: string
}

/** The fields a targetable policy spec shares. */
export interface TargetablePolicy {
  readonly selector?: { readonly matchLabels?: Readonly<Record<string, string>> | undefined } | undefined
  readonly targetRef?: TargetRef | undefined
  readonly targetRefs?: ReadonlyArray<TargetRef> | undefined
}

export const targetRefsOf = (spec: TargetablePolicy): ReadonlyArray<TargetRef> => [
  ...(spec.targetRef !== undefined ? [spec.targetRef] : []),
  ...(spec.targetRefs ?? []),
]

const selectorLabels = (spec: TargetablePolicy): Readonly<Record<string, string>> | undefined => {
  const labels = spec.selector?.matchLabels
  return labels !== undefined && Object.keys(labels).length > 0 ? labels : undefined
}

/** A policy that names workloads (selector or target references), not a whole namespace. */
export const hasWorkloadTarget = (spec: TargetablePolicy): boolean =>
  selectorLabels(spec) !== undefined || targetRefsOf(spec).length > 0

/**
 * Whether the policy (from `policyNamespace`) attaches to the proxy. Namespace-wide policies
 * (neither selector nor target) attach to everything: the caller keeps them to their namespace.
 */
export const policyAttaches = (spec: TargetablePolicy, policyNamespace: string, proxy: ProxyView): boolean => {
  const refs = targetRefsOf(spec)
  if (refs.length === 0) return matchesLabels(selectorLabels(spec), proxy.labels)
  // Only Gateway targets are meaningful for sidecar-mode proxies (Service targets are for
  // waypoints, which this mesh does not run).
  const gatewayName = proxy.labels[GATEWAY_NAME_LABEL]
  if (gatewayName === undefined || policyNamespace !== proxy.namespace) return false
  return refs.some(
    (ref) =>
      ref.kind === "Gateway" && (ref.group ?? GATEWAY_API_GROUP) === GATEWAY_API_GROUP && ref.name === gatewayName,
  )
}
