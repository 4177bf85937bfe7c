/**
 * The workload a pod belongs to (MESH_META_WORKLOAD_NAME, MESH_META_OWNER, the canonical-name
 * fallback), derived as the reference does from the pod's controller reference, whose kind and
 * apiVersion are taken as they are (a custom controller's too): a ReplicaSet named
 * `<deployment>-<pod-template-hash>` stands for its Deployment (or, with
 * `rollouts-pod-template-hash`, for an Argo Rollout), a ReplicationController with a
 * `deploymentconfig` label for that DeploymentConfig, a Job named `<cronjob>-<8 to 10 digits>`
 * for its CronJob; a pod without a controller is its own workload.
 */
import { asObject, asObjects, asStringMap, stringAt } from "../orchestrator/json.js"
import { OrchestratorNames } from "./names.js"

export interface WorkloadOwner {
  readonly kind: string
  readonly name: string
  /** The controller's apiVersion as its reference gives it; absent: the kind's usual group version. */
  readonly apiVersion?: string
}

/** The reference's CronJob job-name pattern: a scheduled time suffix of 8 to 10 digits. */
const CRONJOB_JOB_NAME = /^(.+)-\d{8,10}$/

const trimmedBy = (name: string, hash: string | undefined): string | undefined =>
  hash !== undefined && hash !== "" && name.endsWith(`-${hash}`) ? name.slice(0, -(hash.length + 1)) : undefined

export const workloadOwnerOf = (pod: Readonly<Record<string, unknown>>): WorkloadOwner => {
  const metadata = asObject(pod.metadata)
  const controller = asObjects(metadata.ownerReferences).find((ref) => ref.controller === true)
  const kind = stringAt(controller?.kind)
  const name = stringAt(controller?.name)
  if (controller === undefined || kind === undefined || name === undefined) {
    const podName = stringAt(metadata.name) ?? ""
    const generated = stringAt(metadata.generateName)
    return { kind: "Pod", name: podName !== "" ? podName : (generated ?? "").replace(/-$/, ""), apiVersion: "v1" }
  }
  const apiVersion = stringAt(controller.apiVersion) ?? ""
  const labels = asStringMap(metadata.labels)
  if (kind === "ReplicaSet") {
    const deployment = trimmedBy(name, labels[OrchestratorNames.podTemplateHash])
    if (deployment !== undefined) return { kind: "Deployment", name: deployment, apiVersion }
    const rollout = trimmedBy(name, labels[OrchestratorNames.rolloutsPodTemplateHash])
    // The reference writes this apiVersion for rollouts (their group is not in the pod).
    if (rollout !== undefined) return { kind: "Rollout", name: rollout, apiVersion: "v1alpha1" }
  }
  const deploymentConfig = labels[OrchestratorNames.deploymentConfig]
  if (kind === "ReplicationController" && deploymentConfig !== undefined && deploymentConfig !== "") {
    return { kind: "DeploymentConfig", name: deploymentConfig, apiVersion }
  }
  if (kind === "Job") {
    const match = CRONJOB_JOB_NAME.exec(name)
    if (match?.[1] !== undefined) return { kind: "CronJob", name: match[1], apiVersion: "batch/v1" }
  }
  return { kind, name, apiVersion }
}

const API_VERSIONS: Readonly<Record<string, string>> = {
  Deployment: "apps/v1",
  ReplicaSet: "apps/v1",
  StatefulSet: "apps/v1",
  DaemonSet: "apps/v1",
  Job: "batch/v1",
  CronJob: "batch/v1",
  Pod: "v1",
  ReplicationController: "v1",
  DeploymentConfig: "apps.openshift.io/v1",
}

/**
 * MESH_META_OWNER in the reference's form, `kubernetes://apis/<apiVersion>/namespaces/<ns>/<kinds>/<name>`
 * (the scheme is kept as the telemetry consumers parse it); undefined without an apiVersion or a name.
 */
export const ownerUri = (owner: WorkloadOwner, namespace: string): string | undefined => {
  const apiVersion = owner.apiVersion || API_VERSIONS[owner.kind]
  return apiVersion === undefined || apiVersion === "" || owner.name === ""
    ? undefined
    : `kubernetes://apis/${apiVersion}/namespaces/${namespace}/${owner.kind.toLowerCase()}s/${owner.name}`
}
