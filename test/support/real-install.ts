/**
 * `meshctl install` on the real API server: meshctl run against its kubeconfig, and the
 * deployment controller's part that no kube-controller-manager plays here (each Deployment's
 * status says its replicas are ready, so install's readiness wait completes).
 */
import { execFile } from "node:child_process"
import { binary, ROOT } from "./processes.js"
import type { RealOrchestrator } from "./real-orchestrator.js"

export interface MeshctlResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs the built meshctl with `--orchconfig kubeconfig` (stdin closed, up to 3 minutes). */
export const meshctlWith = (args: ReadonlyArray<string>, kubeconfig: string): Promise<MeshctlResult> =>
  new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [binary("meshctl"), ...args, "--orchconfig", kubeconfig],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: "1" }, timeout: 180_000 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr }),
    )
    child.stdin?.end()
  })

/** Marks every Deployment of `namespace` whose status is behind its generation as fully ready. */
export const markDeploymentsReady = async (orch: RealOrchestrator, namespace: string): Promise<void> => {
  const list = await orch.api("GET", `/apis/apps/v1/namespaces/${namespace}/deployments`)
  if (list.status !== 200) return
  for (const d of list.body.items) {
    if (d.status?.observedGeneration === d.metadata.generation) continue
    const replicas = d.spec.replicas ?? 1
    await orch.api("PUT", `/apis/apps/v1/namespaces/${namespace}/deployments/${d.metadata.name}/status`, {
      body: {
        ...d,
        status: {
          observedGeneration: d.metadata.generation,
          replicas,
          updatedReplicas: replicas,
          readyReplicas: replicas,
          availableReplicas: replicas,
          conditions: [{ type: "Available", status: "True", reason: "MinimumReplicasAvailable" }],
        },
      },
    })
  }
}
