/** meshnetworks.MeshNetworksAnalyzer (MSH0126): `fromRegistry` names a known registry. */

import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { ALL_ANALYZERS } from "../../../src/services/analysis/analyzers/index.js"
import { meshNetworksEntry } from "../../../src/services/analysis/mesh-networks-input.js"
import { readDocuments } from "../../../src/services/analysis/read-documents.js"
import { makeSnapshot } from "../../../src/services/analysis/snapshot.js"
import { summary } from "./support.js"

const NAME = "meshnetworks.MeshNetworksAnalyzer"
const NETWORKS = `networks:
  west:
    endpoints: [{fromRegistry: Orchestrator}, {fromRegistry: cluster-2}, {fromCidr: 10.0.0.0/8}]
    gateways: [{address: 1.2.3.4, port: 15443}]
  east:
    endpoints: [{fromRegistry: orchestrator}, {fromRegistry: Mock}, {fromRegistry: External}]
    gateways: [{registryServiceName: gw.mesh-system.svc.cluster.local, port: 15443}]
`
const remoteSecret = `apiVersion: v1\nkind: Secret\nmetadata: {name: remote, namespace: mesh-system, labels: {mesh/multiCluster: 'true'}}\ndata: {cluster-2: e30=}\n`

const run = (networks: string, documents: string) => {
  const parsed = meshNetworksEntry("networks.yaml", networks, "mesh-system")
  if (Either.isLeft(parsed)) throw new Error("bad networks fixture")
  const read = readDocuments("test.yaml", documents, "default")
  const analyzer = ALL_ANALYZERS.find((a) => a.name === NAME)!
  return analyzer.run(makeSnapshot([...read.entries, parsed.right.entry]))
}

describe("meshnetworks.MeshNetworksAnalyzer", () => {
  it("reports registries that are neither built in nor a remote cluster, by network", () => {
    const found = run(NETWORKS, "")
    expect(summary(found)).toEqual([
      "MSH0126 MeshNetworks/mesh-system/meshnetworks",
      "MSH0126 MeshNetworks/mesh-system/meshnetworks",
    ])
    expect(found.map((m) => m.text)).toEqual([
      "Unknown service registry orchestrator in network east",
      "Unknown service registry cluster-2 in network west",
    ])
  })

  it("knows the clusters of remote-cluster Secrets", () => {
    expect(run(NETWORKS, remoteSecret).map((m) => m.text)).toEqual([
      "Unknown service registry orchestrator in network east",
    ])
  })

  it("has nothing to say without mesh networks, and rejects a malformed file", () => {
    expect(ALL_ANALYZERS.find((a) => a.name === NAME)!.run(makeSnapshot([]))).toEqual([])
    expect(
      Either.isLeft(
        meshNetworksEntry("bad.yaml", "networks: {west: {endpoints: [{fromCidr: a, fromRegistry: b}]}}", "mesh-system"),
      ),
    ).toBe(true)
  })
})
