import { describe, expect, it } from "vitest"
import type { ValidationIssue } from "../../../src/services/config-model/resource.js"
import {
  coalesceUpdates,
  describeIssues,
  type ObjectSource,
  objectFile,
  objectRemoval,
  objectUpdate,
} from "../../../src/services/config-store/orchestrator-objects.js"
import { ConfigSnapshot } from "../../../src/services/config-store/snapshot.js"

const mesh: ObjectSource = {
  group: "networking.mesh.io",
  version: "v1",
  kind: "VirtualService",
  plural: "virtualservices",
  upstream: false,
}
const upstream: ObjectSource = { ...mesh, group: "networking.istio.io", version: "v1alpha3", upstream: true }

const vs = (name: string, host: string, extra: Record<string, unknown> = {}, resourceVersion = "1") => ({
  metadata: { name, namespace: "default", resourceVersion, uid: "u-1", generation: 1, labels: { app: name } },
  spec: { hosts: [host], http: [{ route: [{ destination: { host } }] }], ...extra },
  status: { observedGeneration: 1 },
})

const hostsOf = (snapshot: ConfigSnapshot, name: string) =>
  (snapshot.get("VirtualService", "default", name)?.spec as { hosts?: Array<string> } | undefined)?.hosts

describe("objectUpdate", () => {
  it("validates an object (without apiVersion/kind) as a config document of its source", () => {
    const update = objectUpdate(mesh, vs("reviews", "reviews"))
    expect(update.file).toBe("orchestrator:networking.mesh.io/VirtualService/default/reviews")
    expect(update.result?.issues).toEqual([])
    const [resource] = update.result?.resources ?? []
    expect(resource?.group).toBe("networking.mesh.io")
    expect(resource?.version).toBe("v1")
    expect(resource?.kind).toBe("VirtualService")
    expect(resource?.meta).toEqual({
      name: "reviews",
      namespace: "default",
      labels: { app: "reviews" },
      annotations: {},
      generation: 1,
    })
    expect(update.resourceVersion).toBe("1")
  })

  it("an upstream object is normalised to the mesh group, in a file that sorts after the mesh one", () => {
    const update = objectUpdate(upstream, vs("reviews", "reviews"))
    expect(update.file).toBe("orchestrator:~networking.istio.io/VirtualService/default/reviews")
    expect(update.result?.resources[0]?.group).toBe("networking.mesh.io")
    expect(update.result?.resources[0]?.version).toBe("v1")
    expect(objectFile(mesh, "default", "reviews") < update.file).toBe(true)
  })

  it("an invalid object: no resource, issues with kind/namespace/name, field path and its pseudo-file", () => {
    const update = objectUpdate(mesh, vs("bad", "bad", { bogus: 1 }))
    expect(update.result?.resources).toEqual([])
    expect(update.result?.issues).toEqual([
      {
        file: "orchestrator:networking.mesh.io/VirtualService/default/bad",
        documentIndex: 0,
        kind: "VirtualService",
        namespace: "default",
        name: "bad",
        path: "spec.bogus",
        message: expect.any(String),
      },
    ])
  })

  it("a validator that throws makes an issue of the object, not a crash", () => {
    const spec = {}
    Object.defineProperty(spec, "hosts", {
      enumerable: true,
      get: () => {
        throw new RangeError("Maximum call stack size exceeded")
      },
    })
    const update = objectUpdate(mesh, { metadata: { name: "deep", namespace: "default" }, spec } as never)
    expect(update.result?.resources).toEqual([])
    expect(update.result?.issues.map((i) => `${i.kind} ${i.namespace}/${i.name}: ${i.message}`)).toEqual([
      "VirtualService default/deep: cannot validate: Maximum call stack size exceeded",
    ])
  })

  it("a resourceVersion-only change is the same resource (a status write pushes nothing)", () => {
    const first = ConfigSnapshot.empty.apply([objectUpdate(mesh, vs("r", "r", {}, "1"))])
    const second = first.snapshot.apply([objectUpdate(mesh, vs("r", "r", {}, "2"))])
    expect(second.changes).toEqual([])
    expect(second.issuesChanged).toBe(false)
  })
})

describe("with the snapshot's rules", () => {
  it("an object made invalid keeps its last valid version; deletion removes it", () => {
    let s = ConfigSnapshot.empty.apply([objectUpdate(mesh, vs("r", "a"))]).snapshot
    const bad = s.apply([objectUpdate(mesh, vs("r", "b", { bogus: true }, "2"))])
    expect(bad.changes).toEqual([])
    expect(bad.issuesChanged).toBe(true)
    s = bad.snapshot
    expect(hostsOf(s, "r")).toEqual(["a"])
    const gone = s.apply([objectRemoval(mesh, vs("r", "a"))])
    expect(gone.changes.map((c) => `${c.type} ${c.key}`)).toEqual(["removed VirtualService/default/r"])
    expect(gone.snapshot.issues).toEqual([])
  })

  it("the same name under both groups: the mesh group's object is served; the upstream one when it is alone", () => {
    const both = ConfigSnapshot.empty.apply([
      objectUpdate(upstream, vs("r", "from-istio")),
      objectUpdate(mesh, vs("r", "from-mesh")),
    ]).snapshot
    expect(hostsOf(both, "r")).toEqual(["from-mesh"])
    expect(both.conflicts.size).toBe(1)
    const alone = both.apply([objectRemoval(mesh, vs("r", "from-mesh"))])
    expect(alone.changes.map((c) => `${c.type} ${c.key}`)).toEqual(["updated VirtualService/default/r"])
    expect(hostsOf(alone.snapshot, "r")).toEqual(["from-istio"])
  })

  it("re-applying identical objects (a relist) changes nothing", () => {
    const objects = [vs("a", "a"), vs("b", "b")]
    const first = ConfigSnapshot.empty.apply(objects.map((o) => objectUpdate(mesh, o)))
    const again = first.snapshot.apply(objects.map((o) => objectUpdate(mesh, o)))
    expect(again.changes).toEqual([])
    expect(again.issuesChanged).toBe(false)
  })
})

describe("coalesceUpdates", () => {
  it("keeps the last update of each object, sorted by file", () => {
    const out = coalesceUpdates([
      objectUpdate(mesh, vs("b", "b1")),
      objectUpdate(mesh, vs("a", "a")),
      objectUpdate(mesh, vs("b", "b2", {}, "2")),
      objectRemoval(mesh, vs("a", "a")),
    ])
    expect(out.map((u) => `${u.name} ${u.result === undefined ? "removed" : u.resourceVersion}`)).toEqual([
      "a removed",
      "b 2",
    ])
  })
})

describe("describeIssues", () => {
  const issue = (path: string, message: string): ValidationIssue => ({ file: "f", documentIndex: 0, path, message })
  it("names the first field and counts the rest", () => {
    expect(describeIssues([issue("spec.a", "bad"), issue("spec.b", "worse"), issue("", "x")])).toBe(
      "field spec.a: bad (and 2 more issues)",
    )
    expect(describeIssues([issue("", "whole document")])).toBe("whole document")
    expect(describeIssues([])).toBe("")
  })
})
