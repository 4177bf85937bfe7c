/**
 * The backend policies of the Gateway API — BackendTLSPolicy (backend-tls-policy.ts) and
 * XBackendTrafficPolicy (backend-traffic-policy.ts) — converted together: their settings merge
 * into DestinationRules per target and host (backend-destination-rules.ts), and each policy
 * gets its ancestor status.
 */
import type { ConfigResource } from "../config-model/resource.js"
import type { DestinationRuleSpec } from "../config-model/schemas/destination-rule.js"
import { backendDestinationRules } from "./backend-destination-rules.js"
import { convertBackendTlsPolicies, type PolicyContext } from "./backend-tls-policy.js"
import { convertBackendTrafficPolicies } from "./backend-traffic-policy.js"
import type { ServiceIndex } from "./backends.js"
import type { GatewayApiInput, GatewayApiOptions, ResourceStatus } from "./model.js"
import { gatewaysByBackend } from "./policy-targets.js"

export const convertBackendPolicies = (
  input: GatewayApiInput,
  options: GatewayApiOptions,
  services: ServiceIndex,
): {
  readonly destinationRules: ReadonlyArray<ConfigResource<DestinationRuleSpec>>
  readonly statuses: ReadonlyArray<ResourceStatus>
} => {
  const tlsPolicies = input.backendTlsPolicies ?? []
  const trafficPolicies = input.backendTrafficPolicies ?? []
  if (tlsPolicies.length === 0 && trafficPolicies.length === 0) return { destinationRules: [], statuses: [] }
  const ctx: PolicyContext = {
    services,
    objects: input.tlsObjects,
    domainSuffix: options.domainSuffix,
    controllerName: options.controllerName,
    now: options.now,
    gateways: tlsPolicies.length === 0 ? new Map() : gatewaysByBackend(input),
  }
  const tls = convertBackendTlsPolicies(tlsPolicies, ctx)
  const traffic = convertBackendTrafficPolicies(trafficPolicies, ctx)
  return {
    destinationRules: backendDestinationRules([...tls.policies, ...traffic.policies]),
    statuses: [...tls.statuses, ...traffic.statuses],
  }
}
