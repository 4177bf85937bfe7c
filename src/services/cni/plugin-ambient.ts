/**
 * The plugin's ambient side (config `ambient_enabled`): a pod the ambient labels enrol (the
 * enrolment rules of src/services/gateway-api/waypoints/binding.ts) is handed to install-cni's node agent,
 * which redirects it in its own namespace and gives it to the node proxy; the plugin writes no
 * rules itself. DEL is passed on too. The NodeAgentClient talks to the agent's socket (its
 * layer is in src/layers/cni).
 */
import { Context, type Effect } from "effect"
import { podInAmbient } from "../gateway-api/waypoints/binding.js"
import type { AddEvent, DelEvent } from "./node-agent-events.js"
import type { PluginPod } from "./plugin-pod.js"
import type { CniError } from "./plugin-protocol.js"

/** Where the node agent runs when the config does not say (install-cni's `--cni-agent-run-dir` default). */
export const DEFAULT_AGENT_RUN_DIR = "/var/run/mesh-cni"

export interface NodeAgentClientShape {
  readonly add: (runDir: string, event: AddEvent) => Effect.Effect<string, CniError>
  readonly del: (runDir: string, event: DelEvent) => Effect.Effect<string, CniError>
}

export class NodeAgentClient extends Context.Tag("mesh/CniNodeAgentClient")<NodeAgentClient, NodeAgentClientShape>() {}

/** Whether the node proxy serves this pod, given its namespace's labels. */
export const isAmbientPod = (pod: PluginPod, namespaceLabels: Readonly<Record<string, string>>): boolean =>
  podInAmbient(
    {
      name: pod.metadata.name,
      namespace: pod.metadata.namespace ?? "",
      ...(pod.metadata.labels === undefined ? {} : { labels: pod.metadata.labels }),
      ...(pod.metadata.annotations === undefined ? {} : { annotations: pod.metadata.annotations }),
      ...(pod.spec?.hostNetwork === undefined ? {} : { hostNetwork: pod.spec.hostNetwork }),
    },
    namespaceLabels,
  )
