/**
 * One Gateway listener as the conversion decides it: served or not, the route kinds that may
 * attach, its problems per condition and the routes attached. Its own file so that the listener
 * kinds (east-west, ListenerSets) and the Gateway reconciliation can all read it.
 */
import type { Listener } from "../config-model/schemas/gateway-api/types.js"
import type { Problem } from "./conditions.js"
import type { ListenerClass } from "./listeners.js"
import type { RouteKind } from "./model.js"

export interface ListenerState {
  readonly listener: Listener
  readonly listenerClass?: ListenerClass
  /** Served: a server of the mesh Gateway, routes may attach. */
  readonly served: boolean
  /** The route kinds that may attach (allowedRoutes.kinds within what the protocol supports). */
  readonly supportedKinds: ReadonlyArray<{ readonly group: string; readonly kind: RouteKind }>
  readonly acceptedProblems: ReadonlyArray<Problem>
  readonly programmedProblems: ReadonlyArray<Problem>
  readonly resolvedRefsProblems: ReadonlyArray<Problem>
  readonly conflict?: Problem
  /** Routes attached to the listener (`kind/namespace/name`), filled in by route binding. */
  readonly attachedRoutes: Set<string>
}
