/** The patch formats of the fake orchestrator API server, on plain values. */
import { describe, expect, it } from "vitest"
import { jsonPatch, mergePatch, strategicMergePatch } from "./patch.js"

const pod = {
  spec: {
    containers: [
      { name: "app", image: "a:1", ports: [{ containerPort: 80 }], env: [{ name: "A", value: "1" }] },
      { name: "side", image: "s:1" },
    ],
    volumes: [{ name: "v", emptyDir: {} }],
  },
  metadata: { finalizers: ["f1"] },
}

describe("patch formats", () => {
  it("merge patch replaces lists and deletes with null", () => {
    expect(mergePatch({ a: { b: 1, c: 2 }, l: [1, 2] }, { a: { b: null, d: 3 }, l: [3] })).toEqual({
      a: { c: 2, d: 3 },
      l: [3],
    })
  })

  it("strategic merge patch merges containers by name, ports by containerPort, env by name", () => {
    const patched = strategicMergePatch(
      pod,
      {
        spec: { containers: [{ name: "app", ports: [{ containerPort: 8080 }], env: [{ name: "A", value: "2" }] }] },
      },
      "Pod",
    ) as typeof pod
    expect(patched.spec.containers[0]).toEqual({
      name: "app",
      image: "a:1",
      ports: [{ containerPort: 80 }, { containerPort: 8080 }],
      env: [{ name: "A", value: "2" }],
    })
    expect(patched.spec.containers[1]).toEqual({ name: "side", image: "s:1" })
  })

  it("honours $patch delete/replace, $setElementOrder, $retainKeys and $deleteFromPrimitiveList", () => {
    const patched = strategicMergePatch(
      pod,
      {
        metadata: { finalizers: ["f2"], "$deleteFromPrimitiveList/finalizers": ["f1"] },
        spec: {
          "$setElementOrder/containers": [{ name: "side" }, { name: "app" }],
          containers: [{ name: "app", $patch: "delete" }, { name: "new" }],
          volumes: [{ name: "v", $retainKeys: ["name", "configMap"], configMap: { name: "cm" } }],
        },
      },
      "Pod",
    ) as { metadata: unknown; spec: { containers: Array<{ name: string }>; volumes: unknown } }
    expect(patched.metadata).toEqual({ finalizers: ["f2"] })
    expect(patched.spec.containers.map((c) => c.name)).toEqual(["side", "new"])
    expect(patched.spec.volumes).toEqual([{ name: "v", configMap: { name: "cm" } }])
    expect(strategicMergePatch({ data: { a: "1" } }, { data: { $patch: "replace", b: "2" } }, "ConfigMap")).toEqual({
      data: { b: "2" },
    })
  })

  it("strategic merge patch merges Service ports by port and webhooks by name", () => {
    const svc = { spec: { ports: [{ port: 80, name: "http" }] } }
    expect(strategicMergePatch(svc, { spec: { ports: [{ port: 443, name: "https" }] } }, "Service")).toEqual({
      spec: {
        ports: [
          { port: 80, name: "http" },
          { port: 443, name: "https" },
        ],
      },
    })
    const hooks = { webhooks: [{ name: "a", clientConfig: { caBundle: "old" } }, { name: "b" }] }
    expect(strategicMergePatch(hooks, { webhooks: [{ name: "a", clientConfig: { caBundle: "new" } }] }, "X")).toEqual({
      webhooks: [{ name: "a", clientConfig: { caBundle: "new" } }, { name: "b" }],
    })
  })

  it("json patch applies add/remove/replace/move/copy/test with escaped pointers", () => {
    const doc = { metadata: { labels: { "a/b": "1" } }, list: [1, 2] }
    expect(
      jsonPatch(doc, [
        { op: "add", path: "/list/-", value: 3 },
        { op: "replace", path: "/metadata/labels/a~1b", value: "2" },
        { op: "copy", from: "/list/0", path: "/first" },
        { op: "move", from: "/first", path: "/moved" },
        { op: "remove", path: "/list/1" },
        { op: "test", path: "/moved", value: 1 },
      ]),
    ).toEqual({ metadata: { labels: { "a/b": "2" } }, list: [1, 3], moved: 1 })
    expect(() => jsonPatch(doc, [{ op: "test", path: "/list/0", value: 9 }])).toThrow(/testing value/)
  })
})
