/**
 * Status conditions reporting a problem (MSH0171), the reference's conditions.ConditionAnalyzer:
 * a waypoint that could not bind (Service, ServiceEntry, WorkloadEntry), an authorization
 * policy the node proxy or waypoint did not accept (or accepted in part), a Gateway-API
 * Gateway or route not accepted, programmed or with unresolved references (routes: each
 * parent's conditions). Only objects read with their status have any.
 */
import { GATEWAY_API_GROUP } from "../../config-model/kinds.js"
import { MESH_DOMAIN } from "../../constants.js"
import type { Analyzer } from "../analyzer.js"
import { MessageTypes } from "../message-types.js"
import { arr, type Entry, type Message, message, rec, type Snapshot, str } from "../snapshot.js"

const WAYPOINT_BOUND = `${MESH_DOMAIN}/WaypointBound`
const GATEWAY_CONDITIONS = ["Accepted", "Programmed", "ResolvedRefs"]

interface Watched {
  readonly kind: string
  readonly group: string
  /** Condition types reported when their status is False. */
  readonly negative: ReadonlyArray<string>
  readonly conditions: (entry: Entry) => ReadonlyArray<Readonly<Record<string, unknown>>>
}

const ownConditions = (entry: Entry) => arr((entry.status ?? rec(entry.body.status)).conditions).map(rec)
const parentConditions = (entry: Entry) =>
  arr(entry.status?.parents).flatMap((parent) => arr(rec(parent).conditions).map(rec))

const WATCHED: ReadonlyArray<Watched> = [
  { kind: "Service", group: "", negative: [WAYPOINT_BOUND], conditions: ownConditions },
  { kind: "ServiceEntry", group: "networking.mesh.io", negative: [WAYPOINT_BOUND], conditions: ownConditions },
  { kind: "WorkloadEntry", group: "networking.mesh.io", negative: [WAYPOINT_BOUND], conditions: ownConditions },
  {
    kind: "AuthorizationPolicy",
    group: "security.mesh.io",
    negative: ["ZtunnelAccepted", "WaypointAccepted"],
    conditions: ownConditions,
  },
  { kind: "Gateway", group: GATEWAY_API_GROUP, negative: GATEWAY_CONDITIONS, conditions: ownConditions },
  { kind: "HTTPRoute", group: GATEWAY_API_GROUP, negative: GATEWAY_CONDITIONS, conditions: parentConditions },
  { kind: "GRPCRoute", group: GATEWAY_API_GROUP, negative: GATEWAY_CONDITIONS, conditions: parentConditions },
]

const negativeConditions = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const out: Array<Message> = []
  for (const watched of WATCHED)
    for (const entry of snapshot.ofKind(watched.kind, watched.group))
      for (const condition of watched.conditions(entry)) {
        const type = str(condition.type)
        const reason = str(condition.reason)
        const negative = watched.negative.includes(type) && str(condition.status) === "False"
        // A policy the waypoint accepted only in part is reported whatever its status says.
        const partial =
          watched.kind === "AuthorizationPolicy" && type === "WaypointAccepted" && reason === "PartiallyInvalid"
        const text = `A condition with a negative status is present: type=${type}, reason=${reason}, message=${str(condition.message)}.`
        if (negative) out.push(message(MessageTypes.NegativeConditionStatus, entry, text))
        if (partial) out.push(message(MessageTypes.NegativeConditionStatus, entry, text))
      }
  return out
}

export const conditionAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "conditions.ConditionAnalyzer",
    description: "Checks for negative status conditions on resources",
    types: [MessageTypes.NegativeConditionStatus],
    run: negativeConditions,
  },
]
