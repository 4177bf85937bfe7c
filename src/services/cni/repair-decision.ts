/**
 * Race repair: which pods the CNI plugin missed (their validation init container keeps failing
 * with the configured exit code or termination message) and what to do about each, in the
 * reference's terms. Pure: the controller in src/layers/cni/repair-controller.ts acts on it.
 */

export interface RepairSettings {
  /** `--repair-delete-pods`: delete broken pods (wins over labelling, as in the reference). */
  readonly deletePods: boolean
  /** `--repair-label-pods`. */
  readonly labelPods: boolean
  readonly labelKey: string
  readonly labelValue: string
  /** Pods without this annotation are ignored ("" = every pod). */
  readonly sidecarAnnotation: string
  /** "" = any init container. */
  readonly initContainerName: string
  /** 0 = any exit code. */
  readonly initContainerExitCode: number
  /** "" = any message; compared with surrounding white space trimmed. */
  readonly initContainerTerminationMessage: string
  /** The node whose pods are repaired ("" = every node). */
  readonly nodeName: string
  /** `--repair-field-selectors` / `--repair-label-selectors`, passed to the API server as given. */
  readonly fieldSelectors: string
  readonly labelSelectors: string
}

interface Terminated {
  readonly exitCode?: number
  readonly reason?: string
  readonly message?: string
}

/** The parts of a pod repair reads. */
export interface RepairPod {
  readonly metadata: {
    readonly name: string
    readonly namespace?: string
    readonly uid?: string
    readonly resourceVersion?: string
    readonly labels?: Readonly<Record<string, string>>
    readonly annotations?: Readonly<Record<string, string>>
  }
  readonly status?: {
    readonly initContainerStatuses?: ReadonlyArray<{
      readonly name: string
      readonly state?: { readonly terminated?: Terminated }
      readonly lastState?: { readonly terminated?: Terminated }
    }>
  }
}

/** The selectors of the pod watch: the configured ones, narrowed to the node. */
export const repairSelectors = (
  settings: Pick<RepairSettings, "nodeName" | "fieldSelectors" | "labelSelectors">,
): { readonly fieldSelector: string; readonly labelSelector: string } => ({
  fieldSelector: [settings.fieldSelectors, settings.nodeName === "" ? "" : `spec.nodeName=${settings.nodeName}`]
    .filter((s) => s !== "")
    .join(","),
  labelSelector: settings.labelSelectors,
})

/** Whether the pod is one the CNI race broke. */
export const isBrokenPod = (pod: RepairPod, settings: RepairSettings): boolean => {
  if (settings.sidecarAnnotation !== "" && pod.metadata.annotations?.[settings.sidecarAnnotation] === undefined)
    return false
  const expectedMessage = settings.initContainerTerminationMessage.trim()
  const matches = (state: Terminated) =>
    (expectedMessage === "" || expectedMessage === (state.message ?? "").trim()) &&
    (settings.initContainerExitCode === 0 || settings.initContainerExitCode === (state.exitCode ?? 0))
  return (pod.status?.initContainerStatuses ?? []).some((container) => {
    if (settings.initContainerName !== "" && container.name !== settings.initContainerName) return false
    // An init container that has now succeeded is never broken, whatever it did before.
    const current = container.state?.terminated
    if (current !== undefined && (current.reason === "Completed" || (current.exitCode ?? 0) === 0)) return false
    const last = container.lastState?.terminated
    return last !== undefined && matches(last)
  })
}

export type RepairAction =
  | { readonly _tag: "None" }
  /** Delete, only if the pod is still the one judged (uid and resourceVersion preconditions). */
  | { readonly _tag: "Delete"; readonly uid: string | undefined; readonly resourceVersion: string | undefined }
  | { readonly _tag: "Label"; readonly patch: { readonly metadata: { readonly labels: Record<string, string> } } }
  /** Already labelled: counted as skipped. */
  | { readonly _tag: "AlreadyLabelled" }

export const repairActionFor = (pod: RepairPod, settings: RepairSettings): RepairAction => {
  if (!(settings.deletePods || settings.labelPods) || !isBrokenPod(pod, settings)) return { _tag: "None" }
  if (settings.deletePods)
    return { _tag: "Delete", uid: pod.metadata.uid, resourceVersion: pod.metadata.resourceVersion }
  if (pod.metadata.labels?.[settings.labelKey] !== undefined) return { _tag: "AlreadyLabelled" }
  return { _tag: "Label", patch: { metadata: { labels: { [settings.labelKey]: settings.labelValue } } } }
}

/** The reference's repair metric with the mesh prefix; labels `type` (delete, label) and `result` (success, skip, fail). */
export const REPAIR_METRIC = "mesh_cni_repair_pods_repaired_total"
