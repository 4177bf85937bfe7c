/**
 * A waypoint's inbound L7 policy: the AuthorizationPolicies attached to it by `targetRef(s)`
 * (the reference's rules for waypoints: a policy in the waypoint's namespace naming its Gateway,
 * one in the root namespace naming the `mesh-waypoint` GatewayClass, or one naming the bound
 * Service in the service's namespace). Selector policies are the node proxy's or a sidecar's,
 * not a waypoint's. ALLOW and DENY rules become the HTTP RBAC filters gRPC servers get
 * (grpc-rbac.ts); AUDIT and CUSTOM policies are reported, not enforced here.
 */

import type { ConfigResource } from "../../../config-model/resource.js"
import type { AuthorizationPolicySpec } from "../../../config-model/schemas/authorization-policy.js"
import type { WaypointRef } from "../../../gateway-api/waypoints/binding.js"
import { WAYPOINT_CLASS } from "../../../gateway-api/waypoints/names.js"
import { rbacFilters } from "../../grpcgen/grpc-rbac.js"
import { authorizationPolicyView } from "../../model/authorization-policy-view.js"
import { digest, type PushContext } from "../../model/push-context.js"
import type { HttpFilter } from "../../protocol/xds-types.js"

const GATEWAY_GROUP = "gateway.networking.k8s.io"

type Ref = NonNullable<AuthorizationPolicySpec["targetRef"]>

const refsOf = (spec: AuthorizationPolicySpec): ReadonlyArray<Ref> => [
  ...(spec.targetRef !== undefined ? [spec.targetRef] : []),
  ...(spec.targetRefs ?? []),
]

/** Whether one targetRef of a policy in `namespace` attaches it to the waypoint or the service. */
const attaches = (
  ref: Ref,
  namespace: string,
  rootNamespace: string,
  waypoint: WaypointRef,
  service: { readonly name: string; readonly namespace: string } | undefined,
): boolean => {
  const group = ref.group ?? ""
  if (group === GATEWAY_GROUP && ref.kind === "Gateway")
    return namespace === waypoint.namespace && ref.name === waypoint.name
  if (group === GATEWAY_GROUP && ref.kind === "GatewayClass")
    return namespace === rootNamespace && ref.name === WAYPOINT_CLASS
  if (group === "" && ref.kind === "Service")
    return service !== undefined && namespace === service.namespace && ref.name === service.name
  return false
}

export interface WaypointPolicy {
  readonly filters: ReadonlyArray<HttpFilter>
  /** The policies applied, `namespace/name`, for cache keys. */
  readonly applied: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<string>
}

/** The RBAC filters of the policies attached to the waypoint or to `service` (undefined: the waypoint only). */
export const waypointPolicy = (
  push: PushContext,
  waypoint: WaypointRef,
  service: { readonly name: string; readonly namespace: string } | undefined,
): WaypointPolicy => {
  const rootNamespace = push.options.rootNamespace
  const attached: Array<ConfigResource<AuthorizationPolicySpec>> = []
  const warnings: Array<string> = []
  for (const policy of push.input.authorizationPolicies ?? []) {
    const { namespace, name } = policy.meta
    if (!refsOf(policy.spec).some((ref) => attaches(ref, namespace, rootNamespace, waypoint, service))) continue
    const action = policy.spec.action ?? "ALLOW"
    if (action !== "ALLOW" && action !== "DENY") {
      warnings.push(`AuthorizationPolicy ${namespace}/${name}: action ${action} is not enforced by waypoints here`)
      continue
    }
    attached.push(policy)
  }
  const rbac = rbacFilters(attached.map((p) => authorizationPolicyView(p.meta, p.spec)))
  return {
    filters: rbac.filters,
    applied: attached.map((p) => `${p.meta.namespace}/${p.meta.name}@${digest(JSON.stringify(p.spec))}`),
    warnings: [...warnings, ...rbac.warnings],
  }
}
