/**
 * `/debug/clusterz`: the remote clusters a control plane follows (from the remote-cluster
 * Secrets, see layers/registry/multicluster.ts), as `meshctl remote-clusters` reads them:
 * `[{ID, SecretName, SyncStatus}]`, the reference's field names. The registries layer provides
 * `RemoteClusters`; without it (no orchestrator registry) the list is empty.
 */
import { Context, type Effect } from "effect"
import { formatTable } from "../proxy-config/table.js"

export interface RemoteClusterState {
  readonly clusterId: string
  /** `<namespace>/<name>` of the Secret the cluster comes from. */
  readonly secret: string
  readonly synced: boolean
}

export class RemoteClusters extends Context.Tag("mesh/RemoteClusters")<
  RemoteClusters,
  { readonly clusters: Effect.Effect<ReadonlyArray<RemoteClusterState>> }
>() {}

export interface ClusterDebugInfo {
  readonly ID: string
  readonly SecretName: string
  readonly SyncStatus: "synced" | "syncing"
}

export const clusterz = (clusters: ReadonlyArray<RemoteClusterState>): ReadonlyArray<ClusterDebugInfo> =>
  [...clusters]
    .sort((a, b) => a.clusterId.localeCompare(b.clusterId))
    .map((c) => ({ ID: c.clusterId, SecretName: c.secret, SyncStatus: c.synced ? "synced" : "syncing" }))

/** `meshctl remote-clusters`: one row per control plane and remote cluster, as the reference prints them. */
export const remoteClustersTable = (
  perControlPlane: ReadonlyArray<{ readonly meshd: string; readonly clusters: ReadonlyArray<ClusterDebugInfo> }>,
): string => {
  const rows = perControlPlane.flatMap(({ meshd, clusters }) =>
    clusters.map((c) => [c.ID, c.SecretName, c.SyncStatus, meshd]),
  )
  return formatTable([["NAME", "SECRET", "STATUS", "MESHD"], ...rows])
}
