/**
 * Services defined differently across the clusters analyzed together (MSH0170): with remote
 * clusters (`--remote-contexts`, or the remote secrets of the primary cluster), a Service of one
 * namespace and name in several clusters must agree on being headless, on its type and on its
 * ports, or traffic to it behaves differently depending on the cluster serving it. Objects
 * without a cluster (files analyzed alone) are not compared.
 */
import type { Analyzer } from "../analyzer.js"
import { MessageTypes } from "../message-types.js"
import { arr, type Entry, groupBy, type Message, message, rec, type Snapshot, str } from "../snapshot.js"

/** The primary cluster's ID, as the reference names the cluster it analyzes. */
export const PRIMARY_CLUSTER = "default"

/** A value with its object keys sorted, so equal ports compare equal however they were written. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    typeof v === "object" && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  )

/** The ports in name order (their order in the list does not matter, their content does). */
const portsKey = (service: Entry): string =>
  canonical(
    [...arr(rec(service.body.spec).ports)].sort((a, b) => {
      const x = str(rec(a).name)
      const y = str(rec(b).name)
      return x < y ? -1 : x > y ? 1 : 0
    }),
  )

const headless = (service: Entry): boolean => str(rec(service.body.spec).clusterIP) === "None"
const serviceType = (service: Entry): string => str(rec(service.body.spec).type)

/** `["a" "b"]`: a list of strings as the reference's messages print one. */
const quotedList = (items: ReadonlyArray<string>): string => `[${items.map((i) => JSON.stringify(i)).join(" ")}]`

/**
 * The clusters disagreeing and why, each Service compared with the first's (the primary's when it
 * has one): a headless/ClusterIP mix names every cluster; a type or port difference the differing
 * cluster and the first.
 */
export const inconsistencies = (
  byCluster: ReadonlyArray<Entry>,
): { readonly clusters: ReadonlyArray<string>; readonly reasons: ReadonlyArray<string> } => {
  const [first] = byCluster
  if (first === undefined) return { clusters: [], reasons: [] }
  const clusters = new Set<string>()
  const reasons = new Set<string>()
  for (const service of byCluster) {
    if (headless(service) !== headless(first)) {
      for (const s of byCluster) clusters.add(s.cluster ?? "")
      reasons.add("service has mixed mode like headless and clusterIP")
    }
    if (serviceType(service) !== serviceType(first)) {
      clusters.add(service.cluster ?? "")
      reasons.add("service type is inconsistent")
    }
    if (portsKey(service) !== portsKey(first)) {
      clusters.add(service.cluster ?? "")
      reasons.add("service ports are inconsistent")
    }
  }
  if (clusters.size > 0) clusters.add(first.cluster ?? "")
  return { clusters: [...clusters].sort(), reasons: [...reasons].sort() }
}

/** The primary first, then the remote clusters by name. */
const clusterOrder = (a: Entry, b: Entry): number => {
  const x = a.cluster === PRIMARY_CLUSTER ? "" : (a.cluster ?? "")
  const y = b.cluster === PRIMARY_CLUSTER ? "" : (b.cluster ?? "")
  return x < y ? -1 : x > y ? 1 : 0
}

const inconsistentServices = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const out: Array<Message> = []
  const services = snapshot.ofKind("Service", "").filter((s) => s.cluster !== undefined && s.cluster !== "")
  for (const group of groupBy(services, (s) => `${s.namespace}/${s.name}`).values()) {
    // One Service per cluster: the first read (a file's replaces the primary cluster's already).
    const perCluster = new Map<string, Entry>()
    for (const s of group) if (!perCluster.has(s.cluster ?? "")) perCluster.set(s.cluster ?? "", s)
    const ordered = [...perCluster.values()].sort(clusterOrder)
    if (ordered.length < 2) continue
    const found = inconsistencies(ordered)
    const [subject] = ordered
    if (found.clusters.length === 0 || subject === undefined) continue
    out.push(
      message(
        MessageTypes.MultiClusterInconsistentService,
        subject,
        `The service ${subject.name} in namespace ${JSON.stringify(subject.namespace)} is inconsistent across clusters ${quotedList(found.clusters)}, which can lead to undefined behaviors. The inconsistent behaviors are: ${found.reasons.join("; ")}.`,
      ),
    )
  }
  return out
}

export const multiClusterAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "services.MultiClusterServiceAnalyzer",
    description: "Check the validity of services in the multi-cluster environment",
    types: [MessageTypes.MultiClusterInconsistentService],
    run: inconsistentServices,
  },
]
