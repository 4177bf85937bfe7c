/**
 * Remote-cluster Secrets: in the mesh namespace, Secrets labelled `mesh/multiCluster=true` (or
 * the upstream `istio/multiCluster=true`) whose every data key is a cluster ID and its value
 * that cluster's kubeconfig. This module turns the current Secrets into the wanted clusters and
 * plans what to start, restart and stop; the controller (src/layers/registry/multicluster.ts)
 * carries the plan out.
 */
import type { OrchSecret } from "../orchestrator/objects.js"

export const MULTICLUSTER_SECRET_LABELS = ["mesh/multiCluster", "istio/multiCluster"] as const

/** Label selectors of the two informers (a selector cannot OR two keys). */
export const MULTICLUSTER_SECRET_SELECTORS = MULTICLUSTER_SECRET_LABELS.map((label) => `${label}=true`)

export interface WantedCluster {
  readonly clusterId: string
  /** `namespace/name` of the Secret naming it. */
  readonly secret: string
  readonly kubeconfig: string
}

export interface WantedClusters {
  readonly clusters: ReadonlyMap<string, WantedCluster>
  /** Entries left out, each a log line. */
  readonly problems: ReadonlyArray<string>
}

export const secretKey = (secret: OrchSecret): string => `${secret.metadata.namespace ?? ""}/${secret.metadata.name}`

/**
 * The clusters the Secrets ask for. A key naming the local cluster is refused (it would
 * replace the local registry); a cluster ID named by several Secrets stays with the Secret that
 * has it now (`owners`), otherwise goes to the first Secret in name order.
 */
export const wantedClusters = (
  secrets: Iterable<OrchSecret>,
  localClusterId: string,
  owners: ReadonlyMap<string, string> = new Map(),
): WantedClusters => {
  const bySecret = new Map<string, OrchSecret>()
  for (const s of secrets) bySecret.set(secretKey(s), s)
  const ordered = [...bySecret.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  const candidates = new Map<string, Array<WantedCluster>>()
  const problems: Array<string> = []
  for (const [key, secret] of ordered) {
    for (const [clusterId, value] of Object.entries(secret.data ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (clusterId === localClusterId) {
        problems.push(
          `ignoring cluster ${clusterId} of secret ${key}: it is the local cluster (--clusterID) and would replace it`,
        )
        continue
      }
      const kubeconfig = Buffer.from(value ?? "", "base64").toString("utf8")
      const list = candidates.get(clusterId) ?? []
      list.push({ clusterId, secret: key, kubeconfig })
      candidates.set(clusterId, list)
    }
  }
  const clusters = new Map<string, WantedCluster>()
  for (const [clusterId, list] of candidates) {
    const owner = owners.get(clusterId)
    const chosen = list.find((c) => c.secret === owner) ?? list[0]
    if (chosen === undefined) continue
    clusters.set(clusterId, chosen)
    for (const other of list)
      if (other !== chosen)
        problems.push(
          `ignoring cluster ${clusterId} of secret ${other.secret}: already registered by secret ${chosen.secret}`,
        )
  }
  return { clusters, problems }
}

export interface RunningCluster {
  readonly clusterId: string
  readonly secret: string
  readonly kubeconfig: string
}

export interface ClusterPlan {
  readonly start: ReadonlyArray<WantedCluster>
  /** Same cluster ID, different kubeconfig (or Secret). */
  readonly restart: ReadonlyArray<WantedCluster>
  readonly stop: ReadonlyArray<string>
}

/** What to do to go from the running clusters to the wanted ones. */
export const planClusters = (
  running: ReadonlyMap<string, RunningCluster>,
  wanted: ReadonlyMap<string, WantedCluster>,
): ClusterPlan => {
  const start: Array<WantedCluster> = []
  const restart: Array<WantedCluster> = []
  const stop: Array<string> = []
  for (const [id, want] of wanted) {
    const now = running.get(id)
    if (now === undefined) start.push(want)
    else if (now.kubeconfig !== want.kubeconfig || now.secret !== want.secret) restart.push(want)
  }
  for (const id of running.keys()) if (!wanted.has(id)) stop.push(id)
  return { start, restart, stop }
}
