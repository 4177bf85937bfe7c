/**
 * WorkloadEntry and WorkloadGroup as the orchestrator serves them (networking.mesh.io/v1), the
 * annotations auto-registration keeps on the entries it manages, and the resources it writes.
 * Names follow the reference (istio.io → mesh.io).
 */
import type { WorkloadEntrySpec, WorkloadGroupSpec } from "../../config-model/schemas/workload-entry.js"
import type { OrchObject } from "../../orchestrator/objects.js"
import type { ResourceRef } from "../../orchestrator/resources.js"

/** The instance (`POD_NAME`) whose connection keeps the entry alive. */
export const WORKLOAD_CONTROLLER_ANNOTATION = "mesh.io/workloadController"
/** When the proxy last connected (RFC 3339); removed on disconnect. */
export const CONNECTED_AT_ANNOTATION = "mesh.io/connectedAt"
/** When the proxy disconnected (RFC 3339); the grace period runs from here. */
export const DISCONNECTED_AT_ANNOTATION = "mesh.io/disconnectedAt"
/** The WorkloadGroup an entry was created from: marks it auto-registered (and so deletable). */
export const AUTO_REGISTRATION_GROUP_ANNOTATION = "mesh.io/autoRegistrationGroup"
/** The proxy reports its health over xDS: the entry's `Healthy` condition follows it. */
export const HEALTH_CHECK_ANNOTATION = "proxy.mesh.io/health-checks-enabled"
/** The condition health reports set. */
export const HEALTHY_CONDITION = "Healthy"

export interface Condition {
  readonly type: string
  readonly status: "True" | "False" | "Unknown"
  readonly lastProbeTime?: string
  readonly lastTransitionTime?: string
  readonly reason?: string
  readonly message?: string
}

export interface OrchWorkloadEntry extends OrchObject {
  readonly spec?: WorkloadEntrySpec
  readonly status?: { readonly conditions?: ReadonlyArray<Condition> } & Readonly<Record<string, unknown>>
}

export interface OrchWorkloadGroup extends OrchObject {
  readonly spec?: WorkloadGroupSpec
}

export const WorkloadEntries: ResourceRef = {
  group: "networking.mesh.io",
  version: "v1",
  plural: "workloadentries",
  kind: "WorkloadEntry",
  namespaced: true,
}

export const WorkloadGroups: ResourceRef = {
  group: "networking.mesh.io",
  version: "v1",
  plural: "workloadgroups",
  kind: "WorkloadGroup",
  namespaced: true,
}

export const isAutoRegistered = (entry: OrchWorkloadEntry): boolean =>
  entry.metadata.annotations?.[AUTO_REGISTRATION_GROUP_ANNOTATION] !== undefined

export const isHealthChecked = (entry: OrchWorkloadEntry): boolean =>
  entry.metadata.annotations?.[HEALTH_CHECK_ANNOTATION] === "true"
