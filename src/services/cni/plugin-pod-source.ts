/**
 * Where the CNI plugin gets a pod from (the orchestrator, in src/layers/cni), and how a failed
 * lookup is reported to the runtime: an API server that cannot be reached or is overloaded
 * is "try again later" (11) so the runtime retries the sandbox; a refusal is the plugin's own
 * error (100).
 */
import { Context, type Effect } from "effect"
import type { PodRef } from "./plugin-decision.js"
import type { PluginPod } from "./plugin-pod.js"
import { CniError, CniErrorCodes } from "./plugin-protocol.js"

export interface PluginPodSourceShape {
  /** The pod, from the API server the kubeconfig (the config's `kubernetes.kubeconfig`) names. */
  readonly get: (kubeconfig: string, ref: PodRef) => Effect.Effect<PluginPod, CniError>
  /** The labels of a namespace (ambient mode reads its `mesh.io/dataplane-mode`). */
  readonly namespaceLabels?: (
    kubeconfig: string,
    namespace: string,
  ) => Effect.Effect<Readonly<Record<string, string>>, CniError>
}

export class PluginPodSource extends Context.Tag("mesh/CniPluginPodSource")<PluginPodSource, PluginPodSourceShape>() {}

/** HTTP status 0 means the server was not reached (connection refused, timeout, TLS failure). */
export const isTransientStatus = (status: number): boolean =>
  status === 0 || status === 408 || status === 429 || status >= 500

export const podLookupError = (ref: PodRef, status: number, detail: string): CniError =>
  isTransientStatus(status)
    ? new CniError({
        code: CniErrorCodes.tryAgainLater,
        msg: "the orchestrator API server is unavailable; try again later",
        details: `get pod ${ref.namespace}/${ref.name}: ${detail}`,
      })
    : new CniError({
        code: CniErrorCodes.podLookupFailed,
        msg: `cannot get pod ${ref.namespace}/${ref.name}`,
        details: `HTTP ${status}: ${detail}`,
      })
