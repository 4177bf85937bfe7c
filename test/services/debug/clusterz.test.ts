import { describe, expect, it } from "vitest"
import { clusterz, remoteClustersTable } from "../../../src/services/debug/clusterz.js"

describe("clusterz", () => {
  it("renders the remote clusters with the reference's field names, sorted", () => {
    expect(
      clusterz([
        { clusterId: "west", secret: "mesh-system/mesh-remote-secret-west", synced: false },
        { clusterId: "east", secret: "mesh-system/mesh-remote-secret-east", synced: true },
      ]),
    ).toEqual([
      { ID: "east", SecretName: "mesh-system/mesh-remote-secret-east", SyncStatus: "synced" },
      { ID: "west", SecretName: "mesh-system/mesh-remote-secret-west", SyncStatus: "syncing" },
    ])
  })

  it("prints NAME, SECRET, STATUS, MESHD per control plane", () => {
    const lines = remoteClustersTable([
      { meshd: "meshd-1", clusters: [{ ID: "east", SecretName: "mesh-system/s-east", SyncStatus: "synced" }] },
      { meshd: "meshd-2", clusters: [{ ID: "east", SecretName: "mesh-system/s-east", SyncStatus: "syncing" }] },
    ])
      .trimEnd()
      .split("\n")
    expect(lines).toEqual([
      expect.stringMatching(/^NAME +SECRET +STATUS +MESHD$/),
      expect.stringMatching(/^east +mesh-system\/s-east +synced +meshd-1$/),
      expect.stringMatching(/^east +mesh-system\/s-east +syncing +meshd-2$/),
    ])
    expect(remoteClustersTable([]).trimEnd()).toMatch(/^NAME +SECRET +STATUS +MESHD$/)
  })
})
