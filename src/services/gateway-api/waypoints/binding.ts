/**
 * Which waypoint a namespace, Service, ServiceEntry, pod or WorkloadEntry uses, and which pods the
 * node proxy captures (ambient enrolment). Pure rules over object metadata, shared by the
 * discovery server's ambient index and the waypoint configuration.
 *
 * Waypoint binding, as the reference decides it:
 * - the object's own `mesh.io/use-waypoint` label wins; `none` opts the object out (its
 *   namespace's waypoint is then not used either);
 * - otherwise the namespace's `mesh.io/use-waypoint` label applies (`none` there means no waypoint);
 * - the waypoint's namespace is the label holder's `mesh.io/use-waypoint-namespace` label, else the
 *   object's own namespace;
 * - the named waypoint must exist (ready), accept attachment from the object's namespace (its HBONE
 *   listener's `allowedRoutes.namespaces`, `Same` by default), and serve the traffic type: services
 *   need `service` or `all`, workloads `workload` or `all`. A workload whose label came from its
 *   namespace and meets a service-only waypoint simply has no waypoint (no error);
 * - a waypoint's (or east-west gateway's) own Service never uses a waypoint.
 *
 * Ambient enrolment (the reference's default enablement selectors): a pod labelled
 * `mesh.io/dataplane-mode: ambient`, or any pod of a namespace so labelled unless the pod says
 * `none`; never a host-network pod or a pod with an injected sidecar (`sidecar.mesh.io/status`).
 */

import type { LabelSelector, Listener } from "../../config-model/schemas/gateway-api/types.js"
import { Annotations, MESH_DOMAIN } from "../../constants.js"
import { MANAGED_BY } from "../deployment/names.js"
import { NAMESPACE_NAME_LABEL, selectorMatches } from "../selectors.js"
import { DEFAULT_TRAFFIC_TYPE, type TrafficType, WaypointLabels } from "./names.js"

export const AMBIENT_MODE = "ambient"
export const NONE = "none"

export const BindingLabels = {
  useWaypoint: WaypointLabels.useWaypoint,
  useWaypointNamespace: `${MESH_DOMAIN}/use-waypoint-namespace`,
  dataplaneMode: WaypointLabels.dataplaneMode,
  /** On a Service: the controller managing it (waypoints' own Services carry the mesh controller). */
  gatewayManaged: `gateway.${MESH_DOMAIN}/managed`,
} as const

/** What the east-west gateway controller writes on its gateways' Services. */
export const EAST_WEST_CONTROLLER = MANAGED_BY["east-west"]

/** The metadata the rules read. */
export interface Meta {
  readonly name: string
  readonly namespace: string
  readonly labels?: Readonly<Record<string, string>>
  readonly annotations?: Readonly<Record<string, string>>
}

export interface WaypointRef {
  readonly name: string
  readonly namespace: string
}

export const waypointKey = (ref: WaypointRef): string => `${ref.namespace}/${ref.name}`

/** What a label holder asks for: a waypoint, explicitly none, or nothing. */
export type UseWaypoint =
  | { readonly _tag: "Waypoint"; readonly ref: WaypointRef }
  | { readonly _tag: "None" }
  | { readonly _tag: "Unset" }

const UNSET: UseWaypoint = { _tag: "Unset" }
const OPTED_OUT: UseWaypoint = { _tag: "None" }

/** Reads `use-waypoint` (and its namespace override) from one label set. */
export const readUseWaypoint = (
  labels: Readonly<Record<string, string>> | undefined,
  defaultNamespace: string,
): UseWaypoint => {
  const name = labels?.[BindingLabels.useWaypoint]
  if (name === undefined) return UNSET
  // "none" is reserved: a waypoint of that name can never be used.
  if (name === NONE) return OPTED_OUT
  const namespace = labels?.[BindingLabels.useWaypointNamespace] ?? defaultNamespace
  return { _tag: "Waypoint", ref: { name, namespace } }
}

/** Where the binding came from: the object's own label, or its namespace's. */
export type BindingSource = "object" | "namespace"

export interface RequestedWaypoint {
  readonly ref: WaypointRef
  readonly source: BindingSource
}

/**
 * The waypoint an object asks for: its own label first (`none` stops the search), then its
 * namespace's. The default namespace is always the object's (a namespace label without
 * `use-waypoint-namespace` names a waypoint in that same namespace).
 */
export const requestedWaypoint = (object: Meta, namespace: Meta | undefined): RequestedWaypoint | undefined => {
  const own = readUseWaypoint(object.labels, object.namespace)
  if (own._tag === "None") return undefined
  if (own._tag === "Waypoint") return { ref: own.ref, source: "object" }
  const inherited = readUseWaypoint(namespace?.labels, object.namespace)
  return inherited._tag === "Waypoint" ? { ref: inherited.ref, source: "namespace" } : undefined
}

/** Which namespaces may attach to a waypoint (its HBONE listener's allowedRoutes). */
export type AttachmentRule =
  | { readonly from: "Same" }
  | { readonly from: "All" }
  | { readonly from: "Selector"; readonly selector: LabelSelector }

/** The facts of a ready waypoint that binding needs. */
export interface WaypointInfo {
  readonly ref: WaypointRef
  readonly trafficType: TrafficType
  readonly attachment: AttachmentRule
}

/**
 * A waypoint's traffic type: the Gateway's `mesh.io/waypoint-for` label, else its class's, else
 * `service`. An unknown value is kept as given by the reference and serves nothing; here it reads
 * as `none`.
 */
export const waypointTrafficType = (
  gatewayLabels: Readonly<Record<string, string>> | undefined,
  classLabels: Readonly<Record<string, string>> | undefined,
): TrafficType => {
  const value = gatewayLabels?.[WaypointLabels.waypointFor] ?? classLabels?.[WaypointLabels.waypointFor]
  if (value === undefined) return DEFAULT_TRAFFIC_TYPE
  return value === "all" || value === "service" || value === "workload" || value === "none" ? value : "none"
}

/** The attachment rule of a waypoint's listeners: the HBONE listener on 15008, else `Same`. */
export const waypointAttachment = (listeners: ReadonlyArray<Listener>): AttachmentRule => {
  const hbone = listeners.find((l) => l.protocol === "HBONE" && l.port === 15008)
  const namespaces = hbone?.allowedRoutes?.namespaces
  const from = namespaces?.from ?? "Same"
  if (from === "All") return { from: "All" }
  if (from === "Selector") return { from: "Selector", selector: namespaces?.selector ?? {} }
  return { from: "Same" }
}

export const allowsAttachment = (
  waypoint: WaypointInfo,
  namespace: string,
  namespaceLabels: Readonly<Record<string, string>> | undefined,
): boolean => {
  switch (waypoint.attachment.from) {
    case "All":
      return true
    case "Selector":
      return selectorMatches(waypoint.attachment.selector, {
        [NAMESPACE_NAME_LABEL]: namespace,
        ...namespaceLabels,
      })
    case "Same":
      return waypoint.ref.namespace === namespace
  }
}

/** Why a requested waypoint is not used (the reference reports these on the object's status). */
export type BindingProblem =
  | { readonly _tag: "NotReady"; readonly waypoint: string }
  | { readonly _tag: "AttachmentDenied"; readonly waypoint: string }
  | { readonly _tag: "UnsupportedTrafficType"; readonly waypoint: string; readonly wanted: "service" | "workload" }

export interface Binding {
  readonly waypoint?: WaypointInfo
  readonly problem?: BindingProblem
}

const NO_BINDING: Binding = {}

/** The kind of target a binding is for: a service (Service, ServiceEntry) or a workload (pod, WorkloadEntry). */
export type BindingTarget = "service" | "workload"

const serves = (trafficType: TrafficType, target: BindingTarget): boolean =>
  trafficType === "all" || trafficType === target

/**
 * Resolves an object's waypoint. `lookup` finds a ready waypoint by `namespace/name`; a namespace
 * may be missing (an object seen before its namespace), and then only the object's label counts.
 */
export const bindWaypoint = (
  target: BindingTarget,
  object: Meta,
  namespace: Meta | undefined,
  lookup: (key: string) => WaypointInfo | undefined,
): Binding => {
  if (target === "service") {
    const managed = object.labels?.[BindingLabels.gatewayManaged]
    // A waypoint's or east-west gateway's own Service is never captured by a waypoint.
    if (managed === MANAGED_BY.waypoint || managed === EAST_WEST_CONTROLLER) return NO_BINDING
  }
  const requested = requestedWaypoint(object, namespace)
  if (requested === undefined) return NO_BINDING
  const key = waypointKey(requested.ref)
  const waypoint = lookup(key)
  if (waypoint === undefined) return { problem: { _tag: "NotReady", waypoint: key } }
  if (!allowsAttachment(waypoint, object.namespace, namespace?.labels)) {
    return { problem: { _tag: "AttachmentDenied", waypoint: key } }
  }
  if (serves(waypoint.trafficType, target)) return { waypoint }
  // A namespace-wide label meant for services is not a mistake for the namespace's pods.
  if (target === "workload" && requested.source === "namespace") return NO_BINDING
  return { problem: { _tag: "UnsupportedTrafficType", waypoint: key, wanted: target } }
}

export const describeProblem = (problem: BindingProblem): string => {
  switch (problem._tag) {
    case "NotReady":
      return `waypoint ${problem.waypoint} is not ready`
    case "AttachmentDenied":
      return `waypoint ${problem.waypoint} does not allow attachment from this namespace`
    case "UnsupportedTrafficType":
      return `waypoint ${problem.waypoint} does not serve ${problem.wanted} traffic`
  }
}

/** The pod facts enrolment reads. */
export interface PodEnrolment extends Meta {
  readonly hostNetwork?: boolean
}

/** A namespace is ambient when labelled `mesh.io/dataplane-mode: ambient`. */
export const namespaceIsAmbient = (namespaceLabels: Readonly<Record<string, string>> | undefined): boolean =>
  namespaceLabels?.[BindingLabels.dataplaneMode] === AMBIENT_MODE

export const hasSidecar = (annotations: Readonly<Record<string, string>> | undefined): boolean =>
  annotations?.[Annotations.sidecarStatus] !== undefined

/**
 * Whether the node proxy captures a pod (the CNI redirects it; discovery marks it HBONE-capable).
 * A WorkloadEntry follows the same labels (it has no host network and no injected sidecar).
 */
export const podInAmbient = (
  pod: PodEnrolment,
  namespaceLabels: Readonly<Record<string, string>> | undefined,
): boolean => {
  if (pod.hostNetwork === true) return false
  // A node proxy and a sidecar for one pod are not supported together: the sidecar wins.
  if (hasSidecar(pod.annotations)) return false
  const mode = pod.labels?.[BindingLabels.dataplaneMode]
  if (mode === AMBIENT_MODE) return true
  if (mode === NONE) return false
  return namespaceIsAmbient(namespaceLabels)
}
