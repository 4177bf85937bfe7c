/**
 * A Gateway of a remote class (unmanaged-gateway controller): a gateway in another cluster that
 * this control plane cannot program. As the reference does, it is told so in its status —
 * Accepted, Programmed with "remote" in the message, its spec addresses, no listener status —
 * and nothing is generated for it (no mesh Gateway, routes do not attach).
 */
import type { ConfigResource } from "../config-model/resource.js"
import type { KubernetesGatewaySpec } from "../config-model/schemas/gateway-api/types.js"
import { ConditionType, condition, Reason } from "./conditions.js"
import { GatewayApiKind, type ResourceStatus } from "./model.js"

export const remoteGatewayStatus = (gateway: ConfigResource<KubernetesGatewaySpec>, now: string): ResourceStatus => {
  const ctx = { generation: gateway.meta.generation, now }
  const addresses = (gateway.spec.addresses ?? []).map((a) => ({ type: a.type ?? "IPAddress", value: a.value }))
  return {
    kind: GatewayApiKind.KubernetesGateway,
    namespace: gateway.meta.namespace,
    name: gateway.meta.name,
    ...(gateway.meta.generation !== undefined ? { generation: gateway.meta.generation } : {}),
    status: {
      ...(addresses.length > 0 ? { addresses } : {}),
      conditions: [
        condition(ctx, ConditionType.Accepted, true, Reason.Accepted, "Resource accepted"),
        condition(
          ctx,
          ConditionType.Programmed,
          true,
          Reason.Programmed,
          "This Gateway is remote; the mesh will not program it",
        ),
      ],
      listeners: [],
    },
  }
}
