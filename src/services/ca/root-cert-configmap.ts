/**
 * Root certificate distribution on the orchestrator: every namespace gets a ConfigMap
 * `mesh-ca-root-cert` whose `root-cert.pem` is the CA's current trust bundle, for workloads to
 * verify the control plane and each other. This module decides, for one namespace, whether it
 * wants the ConfigMap and what to write; the controller lives in
 * src/layers/ca/orchestrator/root-cert-distributor.ts.
 */
import { MESH_DOMAIN } from "../constants.js"
import type { OrchConfigMap, OrchObject } from "../orchestrator/objects.js"

/** Name of the ConfigMap (the reference's `PILOT_CA_CERT_CONFIGMAP` default, renamed). */
export const ROOT_CERT_CONFIGMAP = "mesh-ca-root-cert"
export const ROOT_CERT_KEY = "root-cert.pem"
/** The label the reference puts on the ConfigMaps it manages. */
export const ROOT_CERT_LABELS: Readonly<Record<string, string>> = { [`${MESH_DOMAIN}/config`]: "true" }

/** Orchestrator system namespaces where no mesh workload runs: the reference skips them. */
export const IGNORED_NAMESPACES: ReadonlySet<string> = new Set([
  "kube-system",
  "kube-public",
  "kube-node-lease",
  "local-path-storage",
])

export interface NamespaceLike extends OrchObject {
  readonly status?: { readonly phase?: string }
}

export const isTerminating = (ns: NamespaceLike): boolean =>
  ns.status?.phase === "Terminating" || (ns.metadata.deletionTimestamp ?? "") !== ""

/**
 * Whether a namespace gets the ConfigMap: it exists, is not being deleted, is not a system
 * namespace, and is the watched one when `MESH_WATCH_NAMESPACE` is set.
 */
export const wantsRootCert = (ns: NamespaceLike | undefined, watchNamespace: string): boolean =>
  ns !== undefined &&
  !isTerminating(ns) &&
  !IGNORED_NAMESPACES.has(ns.metadata.name) &&
  (watchNamespace === "" || ns.metadata.name === watchNamespace)

export type RootCertPlan =
  | { readonly _tag: "None" }
  | { readonly _tag: "Create"; readonly configMap: OrchConfigMap }
  | { readonly _tag: "Update"; readonly configMap: OrchConfigMap }

/**
 * What to do in `namespace` given the ConfigMap there now: create it, set its key (keeping
 * other keys and metadata, with the resourceVersion read so a concurrent edit conflicts), or
 * nothing when it already holds `pem`.
 */
export const planRootCert = (namespace: string, existing: OrchConfigMap | undefined, pem: string): RootCertPlan => {
  if (existing === undefined) {
    return {
      _tag: "Create",
      configMap: {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: ROOT_CERT_CONFIGMAP, namespace, labels: { ...ROOT_CERT_LABELS } },
        data: { [ROOT_CERT_KEY]: pem },
      },
    }
  }
  if (existing.data?.[ROOT_CERT_KEY] === pem) return { _tag: "None" }
  return {
    _tag: "Update",
    configMap: {
      ...existing,
      apiVersion: "v1",
      kind: "ConfigMap",
      data: { ...existing.data, [ROOT_CERT_KEY]: pem },
    },
  }
}
