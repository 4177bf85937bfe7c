/**
 * The mesh CNI plugin's entry in a CNI network config list (what install-cni writes and what
 * the container runtime hands the `mesh-cni` binary on stdin), in the reference's shape with
 * the plugin type renamed.
 */

/** The plugin's `type` (the binary's file name in the CNI bin directory). */
export const MESH_CNI_PLUGIN_TYPE = "mesh-cni"

export interface MeshCniPluginConfig {
  readonly type: typeof MESH_CNI_PLUGIN_TYPE
  readonly name?: string
  readonly cniVersion?: string
  /** Log level of the plugin (install-cni's `--log-level`). */
  readonly log_level?: string
  readonly kubernetes: {
    /** The kubeconfig install-cni writes beside the config (service-account token, CA, server). */
    readonly kubeconfig: string
    readonly cni_bin_dir?: string
    /** Pods of these namespaces are never captured. */
    readonly exclude_namespaces?: ReadonlyArray<string>
  }
  /** Ambient mode (install-cni `--ambient-enabled`): enrolled pods go to the node agent. */
  readonly ambient_enabled?: boolean
  /** The node agent's run directory (its event socket is there). */
  readonly cni_agent_run_dir?: string
  /** Set by the runtime in a chain: the previous plugin's result, passed through unchanged. */
  readonly prevResult?: unknown
  readonly [key: string]: unknown
}
