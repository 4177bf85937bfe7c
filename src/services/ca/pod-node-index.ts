/**
 * Which service accounts have pods on which node, for node authorization
 * (`CA_TRUSTED_NODE_ACCOUNTS`): a node agent may ask for an identity only if a pod of that
 * namespace and service account is scheduled on its node. Kept current from pod events; a pod
 * counts once it has a node and a service account, whatever its phase (as in the reference).
 */
import type { OrchPod } from "../orchestrator/objects.js"

const slot = (node: string, namespace: string, serviceAccount: string) =>
  `${node}\u0000${namespace}\u0000${serviceAccount}`

const slotOf = (pod: OrchPod): string | undefined => {
  const node = pod.spec?.nodeName ?? ""
  const sa = pod.spec?.serviceAccountName ?? ""
  const ns = pod.metadata.namespace ?? ""
  return node === "" || sa === "" || ns === "" ? undefined : slot(node, ns, sa)
}

const podKey = (pod: OrchPod) => `${pod.metadata.namespace ?? ""}/${pod.metadata.name}`

export class PodNodeIndex {
  // slot → the pods (namespace/name) in it
  private readonly slots = new Map<string, Set<string>>()

  add(pod: OrchPod): void {
    const s = slotOf(pod)
    if (s === undefined) return
    let pods = this.slots.get(s)
    if (pods === undefined) {
      pods = new Set()
      this.slots.set(s, pods)
    }
    pods.add(podKey(pod))
  }

  remove(pod: OrchPod): void {
    const s = slotOf(pod)
    if (s === undefined) return
    const pods = this.slots.get(s)
    if (pods === undefined) return
    pods.delete(podKey(pod))
    if (pods.size === 0) this.slots.delete(s)
  }

  /** Applies an informer event: `previous` is the pod before an update. */
  apply(type: "added" | "updated" | "deleted", pod: OrchPod, previous?: OrchPod): void {
    if (previous !== undefined || type === "deleted") this.remove(previous ?? pod)
    if (type !== "deleted") this.add(pod)
  }

  has(node: string, namespace: string, serviceAccount: string): boolean {
    return (this.slots.get(slot(node, namespace, serviceAccount))?.size ?? 0) > 0
  }
}
