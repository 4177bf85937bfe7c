/**
 * The automated gateway deployment's names: which Gateways get a proxy Deployment, Service and
 * ServiceAccount (their class, and whether their addresses leave them to the user), what those
 * objects are called, and the label and annotation keys involved (the reference's, renamed;
 * the upstream `*.istio.io` spellings of the user-set annotations are read as aliases).
 */

import type { GatewayAddress } from "../../config-model/schemas/gateway-api/types.js"
import { GATEWAY_CONTROLLER_NAME, MESH_DOMAIN } from "../../constants.js"
import { DEFAULT_GATEWAY_CLASS_NAME } from "../model.js"

/** The controller name of waypoint classes (the reference's `istio.io/mesh-controller`). */
export const WAYPOINT_CONTROLLER_NAME = `${MESH_DOMAIN}/mesh-controller`
/** The built-in waypoint class (the reference's `istio-waypoint`). */
export const WAYPOINT_CLASS_NAME = "mesh-waypoint"

/**
 * The controller of east-west gateway classes (the reference's `istio.io/eastwest-controller`):
 * ambient multi-network gateways, deployed as waypoints are but behind a load balancer.
 */
export const EAST_WEST_CONTROLLER_NAME = `${MESH_DOMAIN}/eastwest-controller`
/** The built-in east-west class (the reference's `istio-east-west`), with AMBIENT_ENABLE_MULTI_NETWORK. */
export const EAST_WEST_CLASS_NAME = "mesh-east-west"

/** The kind of proxy a class deploys. */
export type ManagedKind = "gateway" | "waypoint" | "east-west"

export const DeploymentLabels = {
  /** Deployment and pods: who manages them (value per kind below). */
  managed: `gateway.${MESH_DOMAIN}/managed`,
} as const

export const MANAGED_BY: Readonly<Record<ManagedKind, string>> = {
  gateway: `${MESH_DOMAIN}-gateway-controller`,
  waypoint: `${MESH_DOMAIN}-mesh-controller`,
  // Waypoint binding never captures a Service managed so (waypoints/binding.ts).
  "east-west": `${MESH_DOMAIN}-east-west-controller`,
}

/** Annotations a user sets on the Gateway to steer its deployment. */
export const DeploymentAnnotations = {
  /** Names the Deployment and Service instead of the default. */
  nameOverride: `gateway.${MESH_DOMAIN}/name-override`,
  /** Names the ServiceAccount instead of the default. */
  serviceAccount: `gateway.${MESH_DOMAIN}/service-account`,
  /** The Service's type instead of the class's default. */
  serviceType: `networking.${MESH_DOMAIN}/service-type`,
  /** The deployment controller version that manages the Gateway; a newer one is left alone. */
  controllerVersion: `gateway.${MESH_DOMAIN}/controller-version`,
} as const

/** This controller's version, compared with `controllerVersion` of a Gateway. */
export const CONTROLLER_VERSION = 5

/** Keys never copied from the Gateway onto the objects (they steer this controller). */
export const STEERING_ANNOTATIONS: ReadonlyArray<string> = [
  "kubectl.kubernetes.io/last-applied-configuration",
  DeploymentAnnotations.nameOverride,
  DeploymentAnnotations.serviceAccount,
  DeploymentAnnotations.controllerVersion,
  upstream(DeploymentAnnotations.nameOverride),
  upstream(DeploymentAnnotations.serviceAccount),
  upstream(DeploymentAnnotations.controllerVersion),
]

function upstream(key: string): string {
  return key.replace(`.${MESH_DOMAIN}/`, ".istio.io/")
}

/** A Gateway annotation by its mesh key, else its upstream spelling. */
export const annotationOf = (annotations: Readonly<Record<string, string>>, key: string): string | undefined =>
  annotations[key] ?? annotations[upstream(key)]

export interface GatewayClassRef {
  readonly name: string
  readonly controllerName: string
}

export interface ClassOptions {
  /** PILOT_GATEWAY_API_CONTROLLER_NAME. */
  readonly controllerName?: string
  /** PILOT_GATEWAY_API_DEFAULT_GATEWAYCLASS_NAME. */
  readonly defaultClassName?: string
  /** AMBIENT_ENABLE_MULTI_NETWORK: the built-in east-west class exists too; default false. */
  readonly eastWestClass?: boolean
}

/**
 * The kind of proxy each class deploys: classes naming our controller deploy gateways, those
 * naming the mesh controller deploy waypoints; the built-in `mesh` (default) and
 * `mesh-waypoint` classes count as existing (as the reference's GatewayClass controller
 * installs them) unless an object of that name says otherwise.
 */
export const managedClasses = (
  classes: ReadonlyArray<GatewayClassRef>,
  options: ClassOptions = {},
): ReadonlyMap<string, ManagedKind> => {
  const controller = options.controllerName ?? GATEWAY_CONTROLLER_NAME
  const out = new Map<string, ManagedKind>()
  for (const c of classes) {
    if (c.controllerName === controller) out.set(c.name, "gateway")
    else if (c.controllerName === WAYPOINT_CONTROLLER_NAME) out.set(c.name, "waypoint")
    else if (c.controllerName === EAST_WEST_CONTROLLER_NAME) out.set(c.name, "east-west")
  }
  const builtIn: ReadonlyArray<readonly [string, ManagedKind]> = [
    [options.defaultClassName ?? DEFAULT_GATEWAY_CLASS_NAME, "gateway"],
    [WAYPOINT_CLASS_NAME, "waypoint"],
    ...(options.eastWestClass === true ? [[EAST_WEST_CLASS_NAME, "east-west"] as const] : []),
  ]
  for (const [name, kind] of builtIn)
    if (name !== "" && !classes.some((c) => c.name === name) && !out.has(name)) out.set(name, kind)
  return out
}

/**
 * Whether this controller deploys the Gateway: not when its addresses point at a proxy the user
 * runs (a Hostname, or more than one address); one IP address is the LoadBalancer IP to ask for.
 */
export const isManaged = (addresses: ReadonlyArray<GatewayAddress> | undefined): boolean => {
  if (addresses === undefined || addresses.length === 0) return true
  if (addresses.length > 1) return false
  const type = addresses[0]?.type
  return type === undefined || type === "IPAddress"
}

/** Whether a newer controller manages the Gateway (its version annotation is above ours). */
export const managedByNewerController = (annotations: Readonly<Record<string, string>>): boolean => {
  const given = annotationOf(annotations, DeploymentAnnotations.controllerVersion)
  if (given === undefined) return false
  const version = Number.parseInt(given, 10)
  return Number.isFinite(version) && version > CONTROLLER_VERSION
}

/** `<gateway>-<class>` for gateways; a waypoint or an east-west gateway takes the Gateway's own name. */
export const defaultObjectName = (gatewayName: string, className: string, kind: ManagedKind): string =>
  kind === "gateway" ? `${gatewayName}-${className}` : gatewayName

export interface ObjectNames {
  /** The Deployment's and the Service's. */
  readonly deployment: string
  readonly serviceAccount: string
}

export const objectNames = (
  gateway: { readonly name: string; readonly annotations: Readonly<Record<string, string>> },
  className: string,
  kind: ManagedKind,
): ObjectNames => {
  const fallback = defaultObjectName(gateway.name, className, kind)
  const nonEmpty = (v: string | undefined) => (v === undefined || v === "" ? undefined : v)
  return {
    deployment: nonEmpty(annotationOf(gateway.annotations, DeploymentAnnotations.nameOverride)) ?? fallback,
    serviceAccount: nonEmpty(annotationOf(gateway.annotations, DeploymentAnnotations.serviceAccount)) ?? fallback,
  }
}
