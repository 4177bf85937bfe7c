/**
 * Multi-cluster analysis, as the reference does it: the remote clusters are the contexts of
 * `--remote-contexts`, or else the clusters of the primary's remote secrets (Secrets of the mesh
 * namespace labelled `mesh/multiCluster=true` or `istio/multiCluster=true`, each value a
 * kubeconfig whose current context names the cluster). From a remote cluster the service
 * discovery kinds are analyzed as that cluster's, and its mesh resources join the primary's.
 */
import { load } from "js-yaml"
import { MULTICLUSTER_SECRET_LABELS } from "../multicluster/secrets.js"
import { PRIMARY_CLUSTER } from "./analyzers/multi-cluster.js"
import { arr, type Entry, rec, str, stringMap } from "./snapshot.js"

/** The kinds a remote cluster contributes as its own (the reference's service-discovery kinds). */
export const REMOTE_CLUSTER_KINDS: ReadonlySet<string> = new Set(["Service", "Pod", "Namespace", "Node", "Secret"])

export interface KubeconfigContexts {
  readonly contexts: ReadonlyArray<string>
  /** The cluster the current context names; undefined without one. */
  readonly currentCluster: string | undefined
}

/** The context names of a kubeconfig and its current context's cluster; undefined when it is not YAML. */
export const kubeconfigContexts = (text: string): KubeconfigContexts | undefined => {
  let parsed: unknown
  try {
    parsed = load(text)
  } catch {
    return undefined
  }
  const config = rec(parsed)
  const contexts = arr(config.contexts).map(rec)
  const current = contexts.find((c) => str(c.name) === str(config["current-context"]))
  const cluster = current === undefined ? "" : str(rec(current.context).cluster)
  return { contexts: contexts.map((c) => str(c.name)), currentCluster: cluster === "" ? undefined : cluster }
}

/** The contexts of `--remote-contexts` the kubeconfig lacks (the reference fails on any). */
export const missingContexts = (kubeconfig: string, wanted: ReadonlyArray<string>): ReadonlyArray<string> => {
  const known = new Set(kubeconfigContexts(kubeconfig)?.contexts ?? [])
  return wanted.filter((c) => !known.has(c))
}

export interface RemoteSecretCluster {
  readonly clusterId: string
  /** `secret <ns>/<name> key <key>`, for messages. */
  readonly source: string
  readonly kubeconfig: string
}

/**
 * The remote clusters the primary's remote secrets name: every value of a labelled Secret in
 * the mesh namespace whose kubeconfig has a current context (others are skipped, as the
 * reference skips them). `objects` are the primary's listed objects (with kind set).
 */
export const remoteSecretClusters = (
  objects: ReadonlyArray<unknown>,
  meshNamespace: string,
): ReadonlyArray<RemoteSecretCluster> => {
  const out: Array<RemoteSecretCluster> = []
  for (const object of objects) {
    const o = rec(object)
    const metadata = rec(o.metadata)
    if (str(o.kind) !== "Secret" || str(metadata.namespace) !== meshNamespace) continue
    const labels = stringMap(metadata.labels)
    if (!MULTICLUSTER_SECRET_LABELS.some((l) => labels[l] === "true")) continue
    const data = stringMap(o.data)
    for (const key of Object.keys(data).sort()) {
      const kubeconfig = Buffer.from(data[key] ?? "", "base64").toString("utf8")
      const cluster = kubeconfigContexts(kubeconfig)?.currentCluster
      if (cluster === undefined) continue
      out.push({ clusterId: cluster, source: `secret ${meshNamespace}/${str(metadata.name)} key ${key}`, kubeconfig })
    }
  }
  return out
}

export interface RemoteRead {
  readonly cluster: string
  readonly entries: ReadonlyArray<Entry>
}

const key = (e: Entry) => `${e.group}/${e.kind}/${e.namespace}/${e.name}`

/**
 * The entries of a multi-cluster analysis: the primary's (files and primary cluster) as cluster
 * `default`; each remote's service-discovery objects as its own; a remote's other objects join
 * the primary's unless one of the same name is there already (the first source wins).
 */
export const mergeClusters = (primary: ReadonlyArray<Entry>, remotes: ReadonlyArray<RemoteRead>): Array<Entry> => {
  const out: Array<Entry> = primary.map((e) => ({ ...e, cluster: PRIMARY_CLUSTER }))
  const shared = new Set(out.map(key))
  for (const remote of remotes)
    for (const e of remote.entries) {
      if (e.group === "" && REMOTE_CLUSTER_KINDS.has(e.kind)) out.push({ ...e, cluster: remote.cluster })
      else if (!shared.has(key(e))) {
        shared.add(key(e))
        out.push({ ...e, cluster: PRIMARY_CLUSTER })
      }
    }
  return out
}
