/**
 * What an endpoint takes from its pod and the pod's node, as the reference derives it:
 * - identity `spiffe://<trust-domain>/ns/<namespace>/sa/<serviceAccountName>` (the same format as
 *   WorkloadEntry endpoints);
 * - locality `region/zone/subzone` from the node labels `topology.kubernetes.io/region|zone`
 *   (the older `failure-domain.beta.kubernetes.io/*` as fallback) and `topology.mesh.io/subzone`;
 *   a pod label `mesh-locality` (`istio-locality` upstream; `.`-separated) overrides it;
 * - network from the pod label `topology.mesh.io/network`, else the network of the cluster (the
 *   label of the mesh's system namespace);
 * - labels: the pod's, plus `topology.mesh.io/network` and `topology.mesh.io/cluster`.
 */
import { Labels, MESH_DOMAIN, spiffeId } from "../../constants.js"
import type { OrchNode, OrchPod } from "../../orchestrator/objects.js"

export const TopologyLabels = {
  region: "topology.kubernetes.io/region",
  zone: "topology.kubernetes.io/zone",
  regionLegacy: "failure-domain.beta.kubernetes.io/region",
  zoneLegacy: "failure-domain.beta.kubernetes.io/zone",
  subzone: `topology.${MESH_DOMAIN}/subzone`,
  cluster: `topology.${MESH_DOMAIN}/cluster`,
  /** Pod label overriding the node's locality, `region.zone.subzone`. */
  podLocality: ["mesh-locality", "istio-locality"],
} as const

export interface WorkloadMeta {
  readonly labels: Readonly<Record<string, string>>
  readonly serviceAccount: string
  readonly locality: string
  readonly network: string
}

/** The locality a node's labels give (empty when it has none of them). */
export const nodeLocality = (node: OrchNode | undefined): string => {
  const labels = node?.metadata.labels
  if (labels === undefined) return ""
  const region = labels[TopologyLabels.region] ?? labels[TopologyLabels.regionLegacy] ?? ""
  const zone = labels[TopologyLabels.zone] ?? labels[TopologyLabels.zoneLegacy] ?? ""
  const subzone = labels[TopologyLabels.subzone] ?? ""
  return region === "" && zone === "" && subzone === "" ? "" : `${region}/${zone}/${subzone}`
}

export const podLocality = (pod: OrchPod, node: OrchNode | undefined): string => {
  for (const label of TopologyLabels.podLocality) {
    const value = pod.metadata.labels?.[label]
    if (value !== undefined && value !== "") return value.replaceAll(".", "/")
  }
  return nodeLocality(node)
}

export interface WorkloadContext {
  readonly trustDomain: string
  readonly clusterId: string
  /** Network of the cluster (system namespace label), "" if none. */
  readonly defaultNetwork: string
}

export const workloadMeta = (pod: OrchPod, node: OrchNode | undefined, context: WorkloadContext): WorkloadMeta => {
  const podLabels = pod.metadata.labels ?? {}
  const network = podLabels[Labels.network] ?? context.defaultNetwork
  const labels: Record<string, string> = { ...podLabels }
  if (network !== "") labels[Labels.network] = network
  if (context.clusterId !== "" && labels[TopologyLabels.cluster] === undefined)
    labels[TopologyLabels.cluster] = context.clusterId
  const sa = pod.spec?.serviceAccountName
  return {
    labels,
    // The API server defaults the account to `default`; objects put directly may lack it.
    serviceAccount: spiffeId(
      context.trustDomain,
      pod.metadata.namespace ?? "",
      typeof sa === "string" && sa !== "" ? sa : "default",
    ),
    locality: podLocality(pod, node),
    network,
  }
}

/** The pod's addresses (`status.podIPs`, else `status.podIP`). */
export const podAddresses = (pod: OrchPod | undefined): ReadonlyArray<string> => {
  const status = pod?.status
  if (status === undefined) return []
  if (Array.isArray(status.podIPs) && status.podIPs.length > 0)
    return status.podIPs.map((p) => p?.ip).filter((ip): ip is string => typeof ip === "string" && ip !== "")
  return typeof status.podIP === "string" && status.podIP !== "" ? [status.podIP] : []
}

/** Running, Ready and not being deleted: a pod ServiceEntries may select. */
export const podIsReady = (pod: OrchPod): boolean =>
  pod.metadata.deletionTimestamp === undefined &&
  pod.status?.phase !== "Succeeded" &&
  pod.status?.phase !== "Failed" &&
  (pod.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True")

/** Container ports by name, for selecting ServiceEntries' named ports. */
export const podPortsByName = (pod: OrchPod): ReadonlyMap<string, number> => {
  const out = new Map<string, number>()
  for (const c of pod.spec?.containers ?? [])
    for (const p of c.ports ?? []) if (p.name !== undefined && p.name !== "") out.set(p.name, p.containerPort)
  return out
}
