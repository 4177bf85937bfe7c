/**
 * Names of waypoints: a waypoint is a Gateway API Gateway of class `mesh-waypoint` listening for
 * HBONE on 15008, labelled with the traffic it serves; namespaces and services opt in with
 * `mesh.io/use-waypoint=<name>`.
 */
import { MESH_DOMAIN } from "../../constants.js"
import type { ResourceRef } from "../../orchestrator/resources.js"

export const WAYPOINT_CLASS = "mesh-waypoint"
export const DEFAULT_WAYPOINT_NAME = "waypoint"
export const WAYPOINT_LISTENER = { name: "mesh", protocol: "HBONE" } as const

export const WaypointLabels = {
  /** The traffic a waypoint serves: one of TRAFFIC_TYPES. */
  waypointFor: `${MESH_DOMAIN}/waypoint-for`,
  /** On a namespace (or service): the waypoint its traffic goes through. */
  useWaypoint: `${MESH_DOMAIN}/use-waypoint`,
  /** `ambient` on a namespace whose workloads are captured by the node proxy. */
  dataplaneMode: `${MESH_DOMAIN}/dataplane-mode`,
} as const

export const TRAFFIC_TYPES = ["all", "none", "service", "workload"] as const
export type TrafficType = (typeof TRAFFIC_TYPES)[number]
export const DEFAULT_TRAFFIC_TYPE: TrafficType = "service"

export const GatewayResource: ResourceRef = {
  group: "gateway.networking.k8s.io",
  version: "v1",
  plural: "gateways",
  kind: "Gateway",
  namespaced: true,
}
