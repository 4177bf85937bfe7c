/**
 * The status of a deployed Gateway the route conversion does not reconcile (waypoints: their
 * HBONE listener carries no routes of the conversion's). Accepted once deployed; Programmed as
 * readiness.ts decides; each listener follows the Gateway. Gateways of the conversion's classes
 * get their status from it instead (services/gateway-api/status.ts), with the same readiness.
 */
import type { Listener } from "../../config-model/schemas/gateway-api/types.js"
import { type ConditionContext, ConditionType, condition, Reason } from "../conditions.js"
import type { DeployedState } from "./readiness.js"

export const deployedGatewayStatus = (
  gateway: { readonly generation?: number | undefined; readonly listeners: ReadonlyArray<Listener> },
  state: DeployedState,
  now: string,
): unknown => {
  const ctx: ConditionContext = { generation: gateway.generation, now }
  const programmed = (what: string) =>
    state.pending === undefined
      ? condition(ctx, ConditionType.Programmed, true, Reason.Programmed, `${what} programmed`)
      : condition(ctx, ConditionType.Programmed, false, state.pending.reason, state.pending.message)
  return {
    ...(state.addresses.length > 0 ? { addresses: state.addresses } : {}),
    conditions: [
      condition(ctx, ConditionType.Accepted, true, Reason.Accepted, "Resource accepted"),
      programmed("Resource"),
    ],
    listeners: gateway.listeners.map((listener) => ({
      name: listener.name,
      supportedKinds: [],
      attachedRoutes: 0,
      conditions: [
        condition(ctx, ConditionType.Accepted, true, Reason.Accepted, "Listener accepted"),
        programmed("Listener"),
        condition(ctx, ConditionType.ResolvedRefs, true, Reason.ResolvedRefs, "All references resolved"),
      ],
    })),
  }
}
