/** The RFC 6902 patch from the original pod to the injected one, applied with an independent applier. */
import { describe, expect, it } from "vitest"
import { defaultInjectionConfig } from "../../../src/services/injection/config.js"
import { injectPod } from "../../../src/services/injection/inject.js"
import { escapePointerToken, jsonPatch } from "../../../src/services/injection/json-patch.js"
import { defaultInjectionValues } from "../../../src/services/injection/values.js"
import { defaultMeshConfig } from "../../../src/services/mesh-config/index.js"
import { applyPatch } from "./json-patch-apply.js"

const roundTrip = (from: Record<string, unknown>, to: Record<string, unknown>) => {
  const ops = jsonPatch(from, to)
  expect(applyPatch(from, ops)).toEqual(to)
  return ops
}

describe("jsonPatch", () => {
  it("is empty for equal documents", () => {
    expect(jsonPatch({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toEqual([])
  })

  it("escapes ~ and / in keys", () => {
    expect(escapePointerToken("a/b~c")).toBe("a~1b~0c")
    const ops = roundTrip(
      { metadata: { annotations: { x: "1" } } },
      { metadata: { annotations: { x: "1", "sidecar.mesh.io/status": "{}", "odd~key": "2" } } },
    )
    expect(ops).toEqual([
      { op: "add", path: "/metadata/annotations/sidecar.mesh.io~1status", value: "{}" },
      { op: "add", path: "/metadata/annotations/odd~0key", value: "2" },
    ])
  })

  it("adds a missing list whole and appends to an existing one with /-", () => {
    const ops = roundTrip(
      { spec: { containers: [{ name: "app" }] } },
      { spec: { containers: [{ name: "app" }, { name: "mesh-proxy" }], initContainers: [{ name: "mesh-init" }] } },
    )
    expect(ops).toEqual([
      { op: "add", path: "/spec/containers/-", value: { name: "mesh-proxy" } },
      { op: "add", path: "/spec/initContainers", value: [{ name: "mesh-init" }] },
    ])
  })

  it("inserts named entries by index and patches kept ones in place", () => {
    const ops = roundTrip(
      { spec: { containers: [{ name: "a", image: "x" }, { name: "b" }] } },
      { spec: { containers: [{ name: "mesh-proxy" }, { name: "a", image: "y" }, { name: "b", env: [] }] } },
    )
    expect(ops).toEqual([
      { op: "add", path: "/spec/containers/0", value: { name: "mesh-proxy" } },
      { op: "replace", path: "/spec/containers/1/image", value: "y" },
      { op: "add", path: "/spec/containers/2/env", value: [] },
    ])
  })

  it("replaces a list whose entries were reordered or removed, and removes dropped keys", () => {
    roundTrip({ l: [{ name: "a" }, { name: "b" }] }, { l: [{ name: "b" }, { name: "a" }, { name: "c" }] })
    roundTrip({ l: [1, 2, 3] }, { l: [3] })
    const ops = roundTrip({ a: 1, b: 2 }, { a: 1 })
    expect(ops).toEqual([{ op: "remove", path: "/b" }])
  })

  it("turns the original pod into the injected one for hold, native and plain injections", () => {
    const pod = {
      metadata: { name: "p", labels: { app: "a" } },
      spec: {
        initContainers: [{ name: "setup", image: "s" }],
        containers: [{ name: "a", image: "a", readinessProbe: { httpGet: { port: 80, path: "/r" } } }],
        volumes: [{ name: "data", emptyDir: {} }],
      },
    }
    for (const annotations of [
      {},
      { "sidecar.mesh.io/holdApplicationUntilProxyStarts": "true" },
      { "sidecar.mesh.io/nativeSidecar": "true" },
    ]) {
      const original = { ...pod, metadata: { ...pod.metadata, annotations } }
      const outcome = injectPod({
        pod: original,
        namespace: { name: "apps", labels: { "mesh-injection": "enabled" } },
        config: defaultInjectionConfig,
        values: defaultInjectionValues,
        meshConfig: JSON.parse(JSON.stringify(defaultMeshConfig())),
        revision: "",
      })
      if (outcome._tag !== "Injected") throw new Error(outcome._tag)
      const ops = jsonPatch(original, outcome.pod)
      expect(applyPatch(original, ops)).toEqual(outcome.pod)
      // Never a whole-pod or whole-spec replacement: the patch stays reviewable.
      expect(ops.some((o) => o.path === "" || o.path === "/spec")).toBe(false)
    }
  })
})
