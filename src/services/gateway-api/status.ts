/**
 * The status this controller writes: a Gateway's conditions (Accepted, Programmed), its
 * addresses and per-listener status (supported kinds, attached route count, Accepted,
 * Programmed, ResolvedRefs, Conflicted); a route's status per parent this controller answers for
 * (Accepted, ResolvedRefs).
 *
 * A Gateway is Programmed once every listener is and an address is known. A Gateway the
 * deployment controller deploys takes its addresses from its Service and is Pending until its
 * Deployment is ready and the Service has an address (deployment/readiness.ts); any other is
 * resolved to the Services its addresses name, or the one the reference would deploy
 * (addresses.ts: AddressNotUsable when missing), and has the IP addresses its spec gives.
 */
import type { ParentReference } from "../config-model/schemas/gateway-api/types.js"
import { type AddressResolution, humanJoin } from "./addresses.js"
import {
  type Condition,
  type ConditionContext,
  ConditionType,
  condition,
  conditionFrom,
  type Problem,
  Reason,
} from "./conditions.js"
import type { DeployedState } from "./deployment/readiness.js"
import type { GatewayState, ListenerState } from "./gateways.js"

export const gatewayStatus = (
  gateway: GatewayState,
  now: string,
  deployed?: DeployedState,
  resolution?: AddressResolution,
): unknown => {
  const ctx: ConditionContext = { generation: gateway.resource.meta.generation, now }
  const listeners = gateway.listeners
  const invalid = listeners.filter((l) => !l.served).map((l) => l.listener.name)
  const acceptedProblems: Array<Problem> = [...gateway.addressProblems]
  if (listeners.length > 0 && invalid.length === listeners.length)
    acceptedProblems.push({ reason: Reason.ListenersNotValid, message: "no listener is valid" })
  const programmedProblems: Array<Problem> = []
  if (invalid.length > 0)
    programmedProblems.push({ reason: Reason.Invalid, message: `invalid listeners: ${invalid.join(", ")}` })
  const addresses = deployed?.addresses ?? resolution?.addresses ?? gateway.addresses
  if (deployed?.pending !== undefined) programmedProblems.push(deployed.pending)
  else if (deployed === undefined && resolution?.problem !== undefined) programmedProblems.push(resolution.problem)
  else if (addresses.length === 0)
    programmedProblems.push({
      reason: Reason.AddressNotAssigned,
      message: "no address assigned to the Gateway (none in spec.addresses)",
    })
  // Bad parameters leave the Gateway served (and Programmed as it is) but not Accepted.
  const accepted = conditionFrom(
    ctx,
    ConditionType.Accepted,
    [...acceptedProblems, ...gateway.parameterProblems],
    Reason.Accepted,
    "Resource accepted",
  )
  const programmed =
    acceptedProblems.length > 0
      ? condition(ctx, ConditionType.Programmed, false, Reason.Invalid, "the Gateway is not accepted")
      : conditionFrom(
          ctx,
          ConditionType.Programmed,
          programmedProblems,
          Reason.Programmed,
          deployed === undefined && (resolution?.assignedTo.length ?? 0) > 0
            ? `Resource programmed, assigned to service(s) ${humanJoin(resolution?.assignedTo ?? [])}`
            : "Resource programmed",
        )
  return {
    ...(addresses.length > 0 ? { addresses } : {}),
    conditions: [accepted, programmed],
    listeners: listeners.map((l) => listenerStatus(ctx, l, acceptedProblems.length === 0)),
  }
}

/** One listener's status (a Gateway's or a ListenerSet's); not Programmed while its owner is not accepted. */
export const listenerStatus = (ctx: ConditionContext, l: ListenerState, ownerAccepted: boolean) => ({
  name: l.listener.name,
  supportedKinds: l.supportedKinds,
  attachedRoutes: l.attachedRoutes.size,
  conditions: [
    conditionFrom(ctx, ConditionType.Accepted, l.acceptedProblems, Reason.Accepted, "Listener accepted"),
    !ownerAccepted
      ? condition(ctx, ConditionType.Programmed, false, Reason.Invalid, "the Gateway is not accepted")
      : conditionFrom(ctx, ConditionType.Programmed, l.programmedProblems, Reason.Programmed, "Listener programmed"),
    conditionFrom(
      ctx,
      ConditionType.ResolvedRefs,
      l.resolvedRefsProblems,
      Reason.ResolvedRefs,
      "All references resolved",
    ),
    l.conflict !== undefined
      ? condition(ctx, ConditionType.Conflicted, true, l.conflict.reason, l.conflict.message)
      : condition(ctx, ConditionType.Conflicted, false, Reason.NoConflicts, "No conflicts"),
  ],
})

export interface RouteParentStatus {
  readonly parentRef: ParentReference
  readonly controllerName: string
  readonly conditions: ReadonlyArray<Condition>
}

/** One parent's status: Accepted from binding (then unsupported values), ResolvedRefs from the backends. */
export const routeParentStatus = (
  ctx: ConditionContext,
  parentRef: ParentReference,
  controllerName: string,
  bindingProblem: Problem | undefined,
  unsupported: ReadonlyArray<Problem>,
  refProblems: ReadonlyArray<Problem>,
): RouteParentStatus => ({
  parentRef,
  controllerName,
  conditions: [
    conditionFrom(
      ctx,
      ConditionType.Accepted,
      bindingProblem !== undefined ? [bindingProblem] : unsupported,
      Reason.Accepted,
      "Route was valid",
    ),
    conditionFrom(ctx, ConditionType.ResolvedRefs, refProblems, Reason.ResolvedRefs, "All references resolved"),
  ],
})
