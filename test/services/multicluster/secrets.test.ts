import { describe, expect, it } from "vitest"
import {
  MULTICLUSTER_SECRET_SELECTORS,
  planClusters,
  wantedClusters,
} from "../../../src/services/multicluster/secrets.js"
import type { OrchSecret } from "../../../src/services/orchestrator/objects.js"

const b64 = (s: string) => Buffer.from(s).toString("base64")

const secret = (name: string, data: Record<string, string>): OrchSecret => ({
  metadata: { name, namespace: "mesh-system", labels: { "mesh/multiCluster": "true" } },
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
})

describe("remote-cluster secrets", () => {
  it("selects both the mesh and the upstream label", () => {
    expect(MULTICLUSTER_SECRET_SELECTORS).toEqual(["mesh/multiCluster=true", "istio/multiCluster=true"])
  })

  it("each data key is a cluster whose kubeconfig is the decoded value", () => {
    const wanted = wantedClusters([secret("s1", { east: "cfg-east", west: "cfg-west" })], "local")
    expect([...wanted.clusters.values()]).toEqual([
      { clusterId: "east", secret: "mesh-system/s1", kubeconfig: "cfg-east" },
      { clusterId: "west", secret: "mesh-system/s1", kubeconfig: "cfg-west" },
    ])
    expect(wanted.problems).toEqual([])
  })

  it("refuses the local cluster with a reason", () => {
    const wanted = wantedClusters([secret("s1", { local: "x", east: "y" })], "local")
    expect([...wanted.clusters.keys()]).toEqual(["east"])
    expect(wanted.problems).toEqual([expect.stringContaining("ignoring cluster local of secret mesh-system/s1")])
  })

  it("a cluster named by two secrets stays with its owner, else the first secret by name", () => {
    const secrets = [secret("b", { east: "from-b" }), secret("a", { east: "from-a" })]
    expect(wantedClusters(secrets, "local").clusters.get("east")?.kubeconfig).toBe("from-a")
    const owned = wantedClusters(secrets, "local", new Map([["east", "mesh-system/b"]]))
    expect(owned.clusters.get("east")?.kubeconfig).toBe("from-b")
    expect(owned.problems).toEqual([
      "ignoring cluster east of secret mesh-system/a: already registered by secret mesh-system/b",
    ])
  })

  it("a secret seen through both labels counts once", () => {
    const s = secret("s1", { east: "x" })
    expect(wantedClusters([s, s], "local").problems).toEqual([])
  })

  it("plans starts, restarts on a changed kubeconfig, and stops", () => {
    const running = new Map([
      ["same", { clusterId: "same", secret: "ns/s", kubeconfig: "a" }],
      ["changed", { clusterId: "changed", secret: "ns/s", kubeconfig: "old" }],
      ["gone", { clusterId: "gone", secret: "ns/s", kubeconfig: "a" }],
    ])
    const wanted = new Map([
      ["same", { clusterId: "same", secret: "ns/s", kubeconfig: "a" }],
      ["changed", { clusterId: "changed", secret: "ns/s", kubeconfig: "new" }],
      ["new", { clusterId: "new", secret: "ns/s", kubeconfig: "n" }],
    ])
    const plan = planClusters(running, wanted)
    expect(plan.start.map((c) => c.clusterId)).toEqual(["new"])
    expect(plan.restart.map((c) => c.clusterId)).toEqual(["changed"])
    expect(plan.stop).toEqual(["gone"])
  })
})
