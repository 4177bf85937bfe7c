/**
 * The Gateway that `waypoint generate`/`apply` write, its readiness (the `Programmed`
 * condition) and the `waypoint list` table.
 */
import { Either } from "effect"
import { Labels, Ports } from "../../constants.js"
import { asObject, asObjects, asStringMap, type Obj } from "../../orchestrator/json.js"
import { formatTable } from "../../proxy-config/table.js"
import {
  GatewayResource,
  TRAFFIC_TYPES,
  type TrafficType,
  WAYPOINT_CLASS,
  WAYPOINT_LISTENER,
  WaypointLabels,
} from "./names.js"

export const parseTrafficType = (value: string): Either.Either<TrafficType, string> =>
  (TRAFFIC_TYPES as ReadonlyArray<string>).includes(value)
    ? Either.right(value as TrafficType)
    : Either.left(`invalid --for "${value}": must be one of ${TRAFFIC_TYPES.join(", ")}`)

export interface WaypointRequest {
  readonly name: string
  /** "" leaves the namespace out (generate without -n). */
  readonly namespace: string
  readonly trafficType: TrafficType
  /** "" for no revision label. */
  readonly revision: string
}

export const waypointGateway = (request: WaypointRequest): Obj => ({
  apiVersion: `${GatewayResource.group}/${GatewayResource.version}`,
  kind: GatewayResource.kind,
  metadata: {
    name: request.name,
    ...(request.namespace === "" ? {} : { namespace: request.namespace }),
    labels: {
      [WaypointLabels.waypointFor]: request.trafficType,
      ...(request.revision === "" ? {} : { [Labels.revision]: request.revision }),
    },
  },
  spec: {
    gatewayClassName: WAYPOINT_CLASS,
    listeners: [{ ...WAYPOINT_LISTENER, port: Ports.inboundTunnel }],
  },
})

export const isWaypoint = (gateway: Obj): boolean => asObject(gateway.spec).gatewayClassName === WAYPOINT_CLASS

export interface ConditionView {
  readonly status: string
  readonly reason: string
  readonly message: string
}

export const programmedCondition = (gateway: Obj): ConditionView | undefined => {
  const found = asObjects(asObject(gateway.status).conditions).find((c) => c.type === "Programmed")
  return found === undefined
    ? undefined
    : { status: String(found.status ?? ""), reason: String(found.reason ?? ""), message: String(found.message ?? "") }
}

export const isProgrammed = (gateway: Obj): boolean => programmedCondition(gateway)?.status === "True"

/** What a waypoint that is not ready shows, for the timeout message. */
export const describeReadiness = (gateway: Obj | undefined): string => {
  if (gateway === undefined) return "the gateway does not exist"
  const condition = programmedCondition(gateway)
  if (condition === undefined) return "no Programmed condition in its status"
  const detail = [condition.reason, condition.message].filter((s) => s !== "").join(": ")
  return `condition Programmed is ${condition.status}${detail === "" ? "" : ` (${detail})`}`
}

const metaOf = (gateway: Obj) => asObject(gateway.metadata)

/** `waypoint list`: waypoints by name (NAMESPACE first with -A), or a note when there are none. */
export const waypointTable = (gateways: ReadonlyArray<Obj>, allNamespaces: boolean): string => {
  const waypoints = gateways
    .filter(isWaypoint)
    .sort(
      (a, b) =>
        String(metaOf(a).name).localeCompare(String(metaOf(b).name)) ||
        String(metaOf(a).namespace).localeCompare(String(metaOf(b).namespace)),
    )
  if (waypoints.length === 0) return "No waypoints found.\n"
  const rows = waypoints.map((gateway) => {
    const revision = asStringMap(metaOf(gateway).labels)[Labels.revision] ?? "default"
    const programmed = programmedCondition(gateway)?.status ?? "False"
    const row = [String(metaOf(gateway).name), revision, programmed]
    return allNamespaces ? [String(metaOf(gateway).namespace ?? ""), ...row] : row
  })
  const header = allNamespaces ? ["NAMESPACE", "NAME", "REVISION", "PROGRAMMED"] : ["NAME", "REVISION", "PROGRAMMED"]
  return formatTable([header, ...rows])
}
