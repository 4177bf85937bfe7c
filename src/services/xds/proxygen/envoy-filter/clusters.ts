/**
 * CLUSTER patches on a CDS response, as the reference: a cluster a REMOVE matches goes first,
 * then MERGE (proto merge) and REPLACE apply to the clusters they match, then ADD appends clusters
 * — for a sidecar once in the outbound context (patch context ANY or SIDECAR_OUTBOUND) and once
 * in the inbound one (SIDECAR_INBOUND), for a gateway in the GATEWAY context.
 */
import type { ProtoObject } from "../../cache/resource-spec.js"
import { INBOUND_PASSTHROUGH_CLUSTER } from "../well-known.js"
import { clusterMatch, contextMatch, str } from "./match.js"
import { addUnique, guard, type PatchSet, patchesOf, patchValue, typeOf } from "./patch-set.js"
import type { PatchContext } from "./patches.js"
import { mergeMessage } from "./proto-merge.js"

const clusterContext = (set: PatchSet, cluster: ProtoObject): PatchContext => {
  if (set.proxy.kind === "router") return "GATEWAY"
  const name = str(cluster.name)
  return name.startsWith("inbound|") || name === INBOUND_PASSTHROUGH_CLUSTER ? "SIDECAR_INBOUND" : "SIDECAR_OUTBOUND"
}

export const patchClusters = (
  set: PatchSet,
  clusters: ReadonlyArray<ProtoObject>,
  inboundHosts: (port: number) => ReadonlyArray<string>,
): ReadonlyArray<ProtoObject> => {
  const patches = patchesOf(set, "CLUSTER")
  if (patches.length === 0) return clusters
  const clusterType = typeOf("CLUSTER")
  const out: Array<ProtoObject> = []
  for (const original of clusters) {
    const context = clusterContext(set, original)
    const applies = (c: ProtoObject, p: (typeof patches)[number]) =>
      contextMatch(context, p) && clusterMatch(c, p, inboundHosts)
    if (patches.some((p) => p.operation === "REMOVE" && applies(original, p))) continue
    let cluster = original
    for (const p of patches) {
      if ((p.operation !== "MERGE" && p.operation !== "REPLACE") || !applies(cluster, p)) continue
      const current = cluster
      cluster =
        p.operation === "REPLACE"
          ? patchValue(p)
          : guard(set, p, current, () => mergeMessage(current, patchValue(p), clusterType))
    }
    out.push(cluster)
  }
  const addContexts: ReadonlyArray<PatchContext> =
    set.proxy.kind === "router" ? ["GATEWAY"] : ["SIDECAR_OUTBOUND", "SIDECAR_INBOUND"]
  for (const context of addContexts)
    for (const p of patches) {
      if (p.operation !== "ADD") continue
      // An ADD without a context adds for the outbound side and gateways only (as the reference).
      if (p.context === "ANY" ? context === "SIDECAR_INBOUND" : p.context !== context) continue
      addUnique(set, out, patchValue(p), p, "cluster")
    }
  return out
}
