/**
 * Mesh networks endpoints `fromRegistry` must name a registry the control plane has (MSH0126):
 * the built-in ones (Mock, Orchestrator, External) or a remote cluster, i.e. a data key of a
 * Secret labelled as a remote-cluster secret. One message per unknown reference.
 */

import { MULTICLUSTER_SECRET_LABELS } from "../../multicluster/secrets.js"
import { MOCK_REGISTRY } from "../../registry/mock.js"
import { ORCHESTRATOR_REGISTRY } from "../../registry/orchestrator/service.js"
import type { Analyzer } from "../analyzer.js"
import { MESH_NETWORKS_KIND } from "../mesh-networks-input.js"
import { MessageTypes } from "../message-types.js"
import { arr, type Message, message, rec, type Snapshot, str } from "../snapshot.js"

export const EXTERNAL_REGISTRY = "External"

const knownRegistries = (snapshot: Snapshot): ReadonlySet<string> => {
  const out = new Set([MOCK_REGISTRY, ORCHESTRATOR_REGISTRY, EXTERNAL_REGISTRY])
  for (const secret of snapshot.ofKind("Secret", ""))
    if (MULTICLUSTER_SECRET_LABELS.some((label) => secret.labels[label] === "true"))
      for (const cluster of Object.keys(rec(secret.body.data))) out.add(cluster)
  return out
}

const unknownRegistries = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const networks = snapshot.ofKind(MESH_NETWORKS_KIND, "")
  if (networks.length === 0) return []
  const known = knownRegistries(snapshot)
  const out: Array<Message> = []
  for (const entry of networks) {
    const byName = rec(entry.body.networks)
    for (const network of Object.keys(byName).sort())
      arr(rec(byName[network]).endpoints).forEach((endpoint, j) => {
        const registry = str(rec(endpoint).fromRegistry)
        if (registry === "" || known.has(registry)) return
        out.push(
          message(
            MessageTypes.UnknownMeshNetworksServiceRegistry,
            entry,
            `Unknown service registry ${registry} in network ${network}`,
            ["networks", network, "endpoints", j, "fromRegistry"],
          ),
        )
      })
  }
  return out
}

export const meshNetworksAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "meshnetworks.MeshNetworksAnalyzer",
    description: "Check the validity of MeshNetworks in the cluster",
    types: [MessageTypes.UnknownMeshNetworksServiceRegistry],
    run: unknownRegistries,
  },
]
