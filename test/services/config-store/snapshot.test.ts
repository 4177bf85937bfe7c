import { describe, expect, it } from "vitest"
import type { ConfigResource, ValidationIssue } from "../../../src/services/config-model/resource.js"
import { ConfigSnapshot, deepEqual } from "../../../src/services/config-store/snapshot.js"

const res = (kind: string, name: string, spec: unknown = {}, namespace = "default"): ConfigResource => ({
  group: "networking.mesh.io",
  version: "v1",
  kind,
  meta: { name, namespace, labels: {}, annotations: {} },
  spec,
})
const issue = (file: string, message = "bad"): ValidationIssue => ({ file, documentIndex: 0, path: "spec", message })
const ok = (...resources: ReadonlyArray<ConfigResource>) => ({ resources, issues: [] })
const keys = (s: ConfigSnapshot) => s.all().map((r) => `${r.kind}/${r.meta.namespace}/${r.meta.name}`)

describe("ConfigSnapshot.apply", () => {
  it("adds the resources of a new file and reports them as added", () => {
    const { snapshot, changes } = ConfigSnapshot.empty.apply([
      { file: "/c/a.yaml", result: ok(res("ServiceEntry", "a"), res("DestinationRule", "a")) },
    ])
    expect(keys(snapshot)).toEqual(["DestinationRule/default/a", "ServiceEntry/default/a"])
    expect(changes.map((c) => `${c.type} ${c.key}`)).toEqual([
      "added DestinationRule/default/a",
      "added ServiceEntry/default/a",
    ])
    expect(snapshot.version).toBe(1)
    expect(snapshot.get("ServiceEntry", "default", "a")?.source).toEqual({ file: "/c/a.yaml", documentIndex: 0 })
  })

  it("changing one file touches only its resources", () => {
    const s1 = ConfigSnapshot.empty.apply([
      { file: "a.yaml", result: ok(res("ServiceEntry", "a", { v: 1 })) },
      { file: "b.yaml", result: ok(res("ServiceEntry", "b", { v: 1 })) },
    ]).snapshot
    const { snapshot, changes } = s1.apply([{ file: "a.yaml", result: ok(res("ServiceEntry", "a", { v: 2 })) }])
    expect(changes).toEqual([
      { type: "updated", kind: "ServiceEntry", namespace: "default", name: "a", key: "ServiceEntry/default/a" },
    ])
    expect(snapshot.get("ServiceEntry", "default", "b")).toBe(s1.get("ServiceEntry", "default", "b"))
  })

  it("re-reading an unchanged file reports no change", () => {
    const s1 = ConfigSnapshot.empty.apply([{ file: "a.yaml", result: ok(res("ServiceEntry", "a", { v: 1 })) }]).snapshot
    const r = s1.apply([{ file: "a.yaml", result: ok(res("ServiceEntry", "a", { v: 1 })) }])
    expect(r.changes).toEqual([])
    expect(r.issuesChanged).toBe(false)
  })

  it("unchanged kinds share their maps with the previous snapshot", () => {
    const s1 = ConfigSnapshot.empty.apply([
      { file: "a.yaml", result: ok(res("ServiceEntry", "a")) },
      { file: "b.yaml", result: ok(res("Gateway", "b")) },
    ]).snapshot
    const s2 = s1.apply([{ file: "a.yaml", result: ok(res("ServiceEntry", "a", { x: 1 })) }]).snapshot
    expect(s2.byKind.get("Gateway")).toBe(s1.byKind.get("Gateway"))
    expect(s2.byKind.get("ServiceEntry")).not.toBe(s1.byKind.get("ServiceEntry"))
  })

  it("removing a file removes only its resources", () => {
    const s1 = ConfigSnapshot.empty.apply([
      { file: "a.yaml", result: ok(res("ServiceEntry", "a")) },
      { file: "b.yaml", result: ok(res("ServiceEntry", "b")) },
    ]).snapshot
    const { snapshot, changes } = s1.apply([{ file: "a.yaml", result: undefined }])
    expect(keys(snapshot)).toEqual(["ServiceEntry/default/b"])
    expect(changes.map((c) => `${c.type} ${c.key}`)).toEqual(["removed ServiceEntry/default/a"])
  })

  it("a file turning bad keeps serving its last valid version; the fix clears the issue", () => {
    const good = ConfigSnapshot.empty.apply([
      { file: "a.yaml", result: ok(res("ServiceEntry", "a", { v: 1 }), res("ServiceEntry", "a2")) },
    ]).snapshot
    // The bad version drops a2 and changes a: none of it applies.
    const bad = good.apply([
      { file: "a.yaml", result: { resources: [res("ServiceEntry", "a", { v: 2 })], issues: [issue("a.yaml")] } },
    ])
    expect(bad.changes).toEqual([])
    expect(bad.issuesChanged).toBe(true)
    expect(keys(bad.snapshot)).toEqual(["ServiceEntry/default/a", "ServiceEntry/default/a2"])
    expect(bad.snapshot.get("ServiceEntry", "default", "a")?.spec).toEqual({ v: 1 })
    expect(bad.snapshot.issues).toHaveLength(1)
    expect(bad.snapshot.files.get("a.yaml")?.stale).toBe(true)
    expect(bad.snapshot.invalidFiles).toEqual(["a.yaml"])
    // Still bad, differently: still the last valid version.
    const worse = bad.snapshot.apply([{ file: "a.yaml", result: { resources: [], issues: [issue("a.yaml", "yaml")] } }])
    expect(keys(worse.snapshot)).toEqual(["ServiceEntry/default/a", "ServiceEntry/default/a2"])
    const fixed = worse.snapshot.apply([{ file: "a.yaml", result: ok(res("ServiceEntry", "a", { v: 3 })) }])
    expect(fixed.snapshot.issues).toEqual([])
    expect(fixed.issuesChanged).toBe(true)
    expect(fixed.changes.map((c) => `${c.type} ${c.key}`)).toEqual([
      "updated ServiceEntry/default/a",
      "removed ServiceEntry/default/a2",
    ])
  })

  it("a new file with a bad document serves its valid documents", () => {
    const { snapshot } = ConfigSnapshot.empty.apply([
      { file: "a.yaml", result: { resources: [res("ServiceEntry", "ok")], issues: [issue("a.yaml")] } },
    ])
    expect(keys(snapshot)).toEqual(["ServiceEntry/default/ok"])
    expect(snapshot.files.get("a.yaml")?.stale).toBe(false)
  })

  it("deleting a bad file clears its issues", () => {
    const s1 = ConfigSnapshot.empty.apply([{ file: "a.yaml", result: { resources: [], issues: [issue("a.yaml")] } }])
    expect(s1.snapshot.issues).toHaveLength(1)
    const s2 = s1.snapshot.apply([{ file: "a.yaml", result: undefined }])
    expect(s2.snapshot.issues).toEqual([])
    expect(s2.issuesChanged).toBe(true)
  })

  it("conflicts between files: the first path wins, the loser is reported, removal promotes the loser", () => {
    const s1 = ConfigSnapshot.empty.apply([
      { file: "b.yaml", result: ok(res("ServiceEntry", "x", { from: "b" })) },
      { file: "a.yaml", result: ok(res("ServiceEntry", "x", { from: "a" })) },
    ])
    expect(s1.snapshot.get("ServiceEntry", "default", "x")?.spec).toEqual({ from: "a" })
    expect(s1.snapshot.issues.map((i) => `${i.file}: ${i.message}`)).toEqual([
      "b.yaml: duplicate ServiceEntry/default/x: already defined in a.yaml document 0; this definition is ignored",
    ])
    // Same answer whatever the order of application.
    const s1b = ConfigSnapshot.empty
      .apply([{ file: "b.yaml", result: ok(res("ServiceEntry", "x", { from: "b" })) }])
      .snapshot.apply([{ file: "a.yaml", result: ok(res("ServiceEntry", "x", { from: "a" })) }])
    expect(s1b.snapshot.get("ServiceEntry", "default", "x")?.spec).toEqual({ from: "a" })
    expect(s1b.changes.map((c) => c.type)).toEqual(["updated"])
    const s2 = s1.snapshot.apply([{ file: "a.yaml", result: undefined }])
    expect(s2.snapshot.get("ServiceEntry", "default", "x")?.spec).toEqual({ from: "b" })
    expect(s2.snapshot.issues).toEqual([])
    expect(s2.changes.map((c) => c.type)).toEqual(["updated"])
  })

  it("duplicates within one file: the first document wins", () => {
    const a = { ...res("Gateway", "g", { n: 0 }), source: { file: "a.yaml", documentIndex: 0 } }
    const b = { ...res("Gateway", "g", { n: 1 }), source: { file: "a.yaml", documentIndex: 1 } }
    const { snapshot } = ConfigSnapshot.empty.apply([{ file: "a.yaml", result: ok(b, a) }])
    expect(snapshot.get("Gateway", "default", "g")?.spec).toEqual({ n: 0 })
    expect(snapshot.issues).toHaveLength(1)
    expect(snapshot.issues[0]?.documentIndex).toBe(1)
  })

  it("lists by kind sorted by namespace and name, optionally one namespace", () => {
    const { snapshot } = ConfigSnapshot.empty.apply([
      {
        file: "a.yaml",
        result: ok(
          res("ServiceEntry", "b", {}, "ns2"),
          res("ServiceEntry", "z", {}, "ns1"),
          res("ServiceEntry", "a", {}, "ns2"),
        ),
      },
    ])
    expect(snapshot.list("ServiceEntry").map((r) => `${r.meta.namespace}/${r.meta.name}`)).toEqual([
      "ns1/z",
      "ns2/a",
      "ns2/b",
    ])
    expect(snapshot.list("ServiceEntry", "ns2").map((r) => r.meta.name)).toEqual(["a", "b"])
    expect(snapshot.list("Nothing")).toEqual([])
    expect(snapshot.kinds).toEqual(["ServiceEntry"])
  })
})

describe("deepEqual", () => {
  it("compares JSON-like values", () => {
    expect(deepEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toBe(true)
    expect(deepEqual({ a: 1, b: undefined }, { a: 1 })).toBe(true)
    expect(deepEqual([1], { 0: 1 })).toBe(false)
    expect(deepEqual({ a: 1 }, { a: 2 })).toBe(false)
  })
})
