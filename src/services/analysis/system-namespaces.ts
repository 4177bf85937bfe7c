/**
 * The orchestrator's own namespaces, which `meshctl analyze` leaves out as the reference does
 * (its injector's ignored namespaces): nothing of a file in them is analyzed, and from a cluster
 * (primary or remote) their Namespace objects, Services, Pods and Deployments are not read. A
 * cluster's mesh resources, ConfigMaps and Secrets there are still read (the reference filters
 * only those four kinds when listing).
 */
import type { Entry } from "./snapshot.js"

export const SYSTEM_NAMESPACES: ReadonlySet<string> = new Set([
  "kube-system",
  "kube-public",
  "kube-node-lease",
  "local-path-storage",
])

/** The namespace an entry belongs to for this filter: a Namespace's own name, else its namespace. */
const namespaceOf = (e: Entry): string => (e.group === "" && e.kind === "Namespace" ? e.name : e.namespace)

/** Files: every kind in a system namespace (and the system Namespace objects) is left out. */
export const outsideSystemNamespaces = (e: Entry): boolean => !SYSTEM_NAMESPACES.has(namespaceOf(e))

const CLUSTER_FILTERED_KINDS = new Set(["/Namespace", "/Service", "/Pod", "apps/Deployment"])

/** A cluster: only Namespaces, Services, Pods and Deployments of the system namespaces are left out. */
export const readFromCluster = (e: Entry): boolean =>
  !CLUSTER_FILTERED_KINDS.has(`${e.group}/${e.kind}`) || outsideSystemNamespaces(e)
