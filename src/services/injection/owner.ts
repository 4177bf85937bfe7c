/**
 * The workload a pod belongs to (MESH_META_WORKLOAD_NAME, MESH_META_OWNER, the canonical-name
 * fallback), derived as the reference does from the pod's controller reference: a ReplicaSet
 * named `<deployment>-<pod-template-hash>` stands for its Deployment, a Job named
 * `<cronjob>-<digits>` for its CronJob; a pod without a controller is its own workload.
 */
import { asObject, asObjects, asStringMap, stringAt } from "./json.js"
import { OrchestratorNames } from "./names.js"

export interface WorkloadOwner {
  readonly kind: string
  readonly name: string
}

export const workloadOwnerOf = (pod: Readonly<Record<string, unknown>>): WorkloadOwner => {
  const metadata = asObject(pod.metadata)
  const controller = asObjects(metadata.ownerReferences).find((ref) => ref.controller === true)
  const kind = stringAt(controller?.kind)
  const name = stringAt(controller?.name)
  if (controller === undefined || kind === undefined || name === undefined) {
    const podName = stringAt(metadata.name) ?? ""
    const generated = stringAt(metadata.generateName)
    return { kind: "Pod", name: podName !== "" ? podName : (generated ?? "").replace(/-$/, "") }
  }
  if (kind === "ReplicaSet") {
    const hash = asStringMap(metadata.labels)[OrchestratorNames.podTemplateHash]
    if (hash !== undefined && name.endsWith(`-${hash}`)) {
      return { kind: "Deployment", name: name.slice(0, -(hash.length + 1)) }
    }
  }
  if (kind === "Job") {
    const match = /^(.+)-\d+$/.exec(name)
    if (match?.[1] !== undefined) return { kind: "CronJob", name: match[1] }
  }
  return { kind, name }
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
 * (the scheme is kept as the telemetry consumers parse it); undefined for an unknown kind.
 */
export const ownerUri = (owner: WorkloadOwner, namespace: string): string | undefined => {
  const apiVersion = API_VERSIONS[owner.kind]
  return apiVersion === undefined || owner.name === ""
    ? undefined
    : `kubernetes://apis/${apiVersion}/namespaces/${namespace}/${owner.kind.toLowerCase()}s/${owner.name}`
}
