/**
 * A DestinationRule's host must be a host visible from it (its own exportTo honoured, as for
 * destinations: exported-hosts.ts), else MSH0174; each subset must select at least one Pod
 * (MSH0173). A subset selects with its labels merged over the host's workload selector (a
 * ServiceEntry's), and Pods are matched in every namespace with the labels the discovery
 * service gives an endpoint: the Pod's own plus its node's hostname and locality labels.
 */
import { MESH_DOMAIN } from "../../constants.js"
import type { Analyzer } from "../analyzer.js"
import { hostLookup } from "../exported-hosts.js"
import { MessageTypes } from "../message-types.js"
import { arr, type Message, message, rec, type Snapshot, selects, str, stringMap, strs } from "../snapshot.js"

const HOSTNAME = "kubernetes.io/hostname"
/** Locality labels copied from a Pod's node: region, zone, subzone. */
const LOCALITY_LABELS = [
  "topology.kubernetes.io/region",
  "topology.kubernetes.io/zone",
  `topology.${MESH_DOMAIN}/subzone`,
]

/** A Pod's labels as an endpoint carries them. */
const endpointLabels = (
  labels: Readonly<Record<string, string>>,
  nodeName: string,
  nodeLabels: Readonly<Record<string, string>> | undefined,
): Readonly<Record<string, string>> => {
  const out: Record<string, string> = { ...labels }
  if (nodeLabels !== undefined)
    for (const key of LOCALITY_LABELS) {
      const value = nodeLabels[key]
      if (value !== undefined && value !== "") out[key] = value
    }
  if (nodeName !== "") out[HOSTNAME] = nodeName
  return out
}

const subsetsSelectPods = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const lookup = hostLookup(snapshot)
  const out: Array<Message> = []
  const pending: Array<{ readonly report: () => Message; readonly selector: Readonly<Record<string, string>> }> = []
  for (const dr of snapshot.ofKind("DestinationRule")) {
    const host = str(dr.body.host)
    const target = lookup(dr.namespace, strs(dr.body.exportTo), host)
    if (target === undefined) {
      out.push(
        message(
          MessageTypes.UnknownDestinationRuleHost,
          dr,
          `The host ${host} defined in the DestinationRule does not match any services in the mesh.`,
          ["spec", "host"],
        ),
      )
      continue
    }
    arr(dr.body.subsets).forEach((subset, i) => {
      const name = str(rec(subset).name)
      pending.push({
        selector: { ...target.workloadLabels, ...stringMap(rec(subset).labels) },
        report: () =>
          message(
            MessageTypes.DestinationRuleSubsetNotSelectPods,
            dr,
            `The Subset ${name} defined in the DestinationRule does not select any pods. Which may lead to 503 UH (NoHealthyUpstream).`,
            ["spec", "subsets", i, "name"],
          ),
      })
    })
  }
  if (pending.length === 0) return out
  const nodes = new Map(snapshot.ofKind("Node", "").map((n) => [n.name, n.labels]))
  let unmatched = pending
  for (const pod of snapshot.ofKind("Pod", "")) {
    if (unmatched.length === 0) break
    const nodeName = str(rec(pod.body.spec).nodeName)
    const labels = endpointLabels(pod.labels, nodeName, nodes.get(nodeName))
    unmatched = unmatched.filter((p) => !selects(p.selector, labels))
  }
  for (const p of unmatched) out.push(p.report())
  return out
}

export const destinationRuleSubsetAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "destinationrule.SubsetSelectPodAnalyzer",
    description: "Checks if pods are selected by subsets in destination rules.",
    types: [MessageTypes.UnknownDestinationRuleHost, MessageTypes.DestinationRuleSubsetNotSelectPods],
    run: subsetsSelectPods,
  },
]
