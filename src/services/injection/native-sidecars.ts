/**
 * Whether the proxy is injected as a native sidecar (an init container with `restartPolicy:
 * Always`) when the pod's `sidecar.mesh.io/nativeSidecar` annotation does not say: the reference's
 * rule. `ENABLE_NATIVE_SIDECARS` is `true` (always), `false` (never) or `auto` (the default); any
 * other value turns it off, with a warning. `auto` asks the orchestrator's nodes: the pod's own
 * node when it is scheduled and known, else every node, each kubelet at least 1.33 (where the
 * orchestrator's sidecar containers became stable). A mixed cluster stays off, so that a pod never
 * lands on a node that would run its proxy as a plain init container and block. Without access to
 * the nodes (offline `orch-inject`, a webhook without an orchestrator), or with none known yet,
 * `auto` means off.
 */

export type NativeSidecarMode = "enabled" | "disabled" | "auto"

/** The first orchestrator minor version (of major 1) whose kubelets run native sidecars by default. */
export const NATIVE_SIDECAR_MIN_MINOR = 33

export interface ParsedNativeSidecarMode {
  readonly mode: NativeSidecarMode
  readonly warning: string | undefined
}

/** `ENABLE_NATIVE_SIDECARS` as the reference reads it: exactly `true`, `false` or `auto` (unset = auto). */
export const parseNativeSidecarMode = (raw: string | undefined): ParsedNativeSidecarMode => {
  switch (raw ?? "") {
    case "":
    case "auto":
      return { mode: "auto", warning: undefined }
    case "true":
      return { mode: "enabled", warning: undefined }
    case "false":
      return { mode: "disabled", warning: undefined }
    default:
      return {
        mode: "disabled",
        warning: `ENABLE_NATIVE_SIDECARS=${JSON.stringify(raw)} is not true, false or auto: native sidecars are off`,
      }
  }
}

/** Whether a kubelet version (`v1.33.2`, `1.34.0-eks-1`) runs native sidecars; unreadable = no. */
export const kubeletSupportsNativeSidecars = (version: string): boolean => {
  const match = /^v?(\d+)\.(\d+)/.exec(version.trim())
  if (match === null) return false
  const major = Number(match[1])
  const minor = Number(match[2])
  return major > 1 || (major === 1 && minor >= NATIVE_SIDECAR_MIN_MINOR)
}

/** The nodes as `auto` reads them: one node's kubelet version by name, and all of them. */
export interface NodeVersions {
  readonly version: (nodeName: string) => string | undefined
  readonly all: () => ReadonlyArray<string>
}

/** The default for one pod (`nodeName`: its `spec.nodeName`, "" when not scheduled yet). */
export const nativeSidecarDefault = (
  mode: NativeSidecarMode,
  nodes: NodeVersions | undefined,
  nodeName: string,
): boolean => {
  if (mode !== "auto") return mode === "enabled"
  if (nodes === undefined) return false
  const own = nodeName === "" ? undefined : nodes.version(nodeName)
  if (own !== undefined) return kubeletSupportsNativeSidecars(own)
  // No node known (a node cache not filled yet, a cluster without nodes): off, not "every one of none".
  const all = nodes.all()
  return all.length > 0 && all.every(kubeletSupportsNativeSidecars)
}

/** The kubelet version an orchestrator Node object reports ("" when it has none). */
export const nodeKubeletVersion = (node: unknown): string => {
  const status = (node as { status?: { nodeInfo?: { kubeletVersion?: unknown } } } | undefined)?.status
  const version = status?.nodeInfo?.kubeletVersion
  return typeof version === "string" ? version : ""
}
