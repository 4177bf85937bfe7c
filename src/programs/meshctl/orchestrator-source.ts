/**
 * Which kubeconfig meshctl would use (cheap to load: no client library): `--orchconfig`/`-c`, else
 * the first file of `$KUBECONFIG`, else `~/.kube/config`.
 */
import { existsSync } from "node:fs"
import { homedir } from "node:os"
import { delimiter, join } from "node:path"
import type { GlobalOptions } from "./global-options.js"

/** Where the kubeconfig comes from and why (for messages): undefined when there is none. */
export const kubeconfigPath = (
  global: Pick<GlobalOptions, "orchconfig">,
  env: NodeJS.ProcessEnv = process.env,
  home: string = homedir(),
): { readonly path: string; readonly from: string } | undefined => {
  if (global.orchconfig !== "") return { path: global.orchconfig, from: "--orchconfig" }
  const fromEnv = (env.KUBECONFIG ?? "").split(delimiter).filter((p) => p !== "")
  const first = fromEnv.find((p) => existsSync(p)) ?? fromEnv[0]
  if (first !== undefined) return { path: first, from: "$KUBECONFIG" }
  const fallback = join(home, ".kube", "config")
  return existsSync(fallback) ? { path: fallback, from: "~/.kube/config" } : undefined
}

/** Whether the user pointed meshctl at a cluster (a flag or `$KUBECONFIG`), not just a default file. */
export const clusterAsked = (global: Pick<GlobalOptions, "orchconfig" | "context">, env = process.env): boolean =>
  global.orchconfig !== "" || global.context !== "" || (env.KUBECONFIG ?? "") !== ""
