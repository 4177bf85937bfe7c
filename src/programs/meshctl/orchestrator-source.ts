/**
 * Which kubeconfig meshctl would use (cheap to load: no client library): `--orchconfig`/`-c`, else
 * the first file of `$KUBECONFIG` (read once, through `MeshctlEnv`), else `~/.kube/config`.
 */
import { existsSync } from "node:fs"
import { homedir } from "node:os"
import { delimiter, join } from "node:path"
import { Effect } from "effect"
import { MeshctlEnv } from "../../services/config/meshctl-env.js"
import type { GlobalOptions } from "./global-options.js"

/** A kubeconfig and why it was chosen (for messages). */
export interface KubeconfigSource {
  readonly path: string
  readonly from: string
}

/** Where the kubeconfig comes from: `kubeconfigEnv` is `$KUBECONFIG`; undefined when there is none. */
export const kubeconfigPath = (
  global: Pick<GlobalOptions, "orchconfig">,
  kubeconfigEnv: string,
  home: string = homedir(),
): KubeconfigSource | undefined => {
  if (global.orchconfig !== "") return { path: global.orchconfig, from: "--orchconfig" }
  const fromEnv = kubeconfigEnv.split(delimiter).filter((p) => p !== "")
  const first = fromEnv.find((p) => existsSync(p)) ?? fromEnv[0]
  if (first !== undefined) return { path: first, from: "$KUBECONFIG" }
  const fallback = join(home, ".kube", "config")
  return existsSync(fallback) ? { path: fallback, from: "~/.kube/config" } : undefined
}

/** `kubeconfigPath` with `$KUBECONFIG` from meshctl's settings. */
export const kubeconfigSource = (
  global: Pick<GlobalOptions, "orchconfig">,
): Effect.Effect<KubeconfigSource | undefined, never, MeshctlEnv> =>
  Effect.map(MeshctlEnv, (env) => kubeconfigPath(global, env.KUBECONFIG))

/** Whether the user pointed meshctl at a cluster (a flag or `$KUBECONFIG`), not just a default file. */
export const clusterAsked = (global: Pick<GlobalOptions, "orchconfig" | "context">, kubeconfigEnv: string): boolean =>
  global.orchconfig !== "" || global.context !== "" || kubeconfigEnv !== ""
