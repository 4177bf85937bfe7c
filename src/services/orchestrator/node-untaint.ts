/**
 * Node untainting (`PILOT_ENABLE_NODE_UNTAINT_CONTROLLERS`), as pure decisions: a node carries
 * the `cni.mesh.io/not-ready` taint until the mesh's CNI node agent runs on it, so that no
 * workload pod lands there before its traffic can be captured; once the CNI pod on the node is
 * Ready, the taint is removed. Names follow the reference (cni.istio.io/not-ready,
 * k8s-app=istio-cni-node), renamed.
 */
import type { OrchNode, OrchPod } from "./objects.js"

export const NOT_READY_TAINT = "cni.mesh.io/not-ready"
/** The label selector of the CNI node agent's pods (in the mesh namespace). */
export const CNI_POD_SELECTOR = "k8s-app=mesh-cni-node"

export const hasTaint = (node: OrchNode, taint: string = NOT_READY_TAINT): boolean =>
  (node.spec?.taints ?? []).some((t) => t.key === taint)

/** Ready as the kubelet says (its Ready condition), and not being deleted. */
export const isPodReady = (pod: OrchPod): boolean =>
  pod.metadata.deletionTimestamp === undefined &&
  (pod.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True")

/** Names of the nodes that have a Ready CNI pod. */
export const nodesWithReadyPod = (pods: ReadonlyArray<OrchPod>): ReadonlySet<string> => {
  const out = new Set<string>()
  for (const pod of pods) {
    const node = pod.spec?.nodeName
    if (node !== undefined && node !== "" && isPodReady(pod)) out.add(node)
  }
  return out
}

/** The tainted nodes whose CNI pod is Ready: the ones to untaint. */
export const nodesToUntaint = (
  nodes: ReadonlyArray<OrchNode>,
  pods: ReadonlyArray<OrchPod>,
  taint: string = NOT_READY_TAINT,
): ReadonlyArray<OrchNode> => {
  const ready = nodesWithReadyPod(pods)
  return nodes.filter((n) => hasTaint(n, taint) && ready.has(n.metadata.name))
}

/**
 * The merge patch that removes the taint: the remaining taints (null when none remain), on the
 * node's resourceVersion, so that a concurrent change of the taints is never overwritten.
 */
export const untaintPatch = (node: OrchNode, taint: string = NOT_READY_TAINT): unknown => {
  const remaining = (node.spec?.taints ?? []).filter((t) => t.key !== taint)
  return {
    metadata: node.metadata.resourceVersion === undefined ? {} : { resourceVersion: node.metadata.resourceVersion },
    spec: { taints: remaining.length > 0 ? remaining : null },
  }
}
