/** Label and field selectors of the fake orchestrator API server. */
import { describe, expect, it } from "vitest"
import { builtinTypes, type KubeObject } from "./resources.js"
import { fieldSelector, labelSelector } from "./selectors.js"

const o = (labels: Record<string, string>): KubeObject => ({ metadata: { name: "n", namespace: "ns", labels } })

describe("selectors", () => {
  it("labels: =, ==, !=, in, notin, exists, !exists", () => {
    const cases: Array<[string, Record<string, string>, boolean]> = [
      ["app=web", { app: "web" }, true],
      ["app==web", { app: "db" }, false],
      ["app!=web", {}, true],
      ["app in (web, db)", { app: "db" }, true],
      ["app notin (web,db)", {}, true],
      ["app notin (web,db)", { app: "web" }, false],
      ["app", { app: "" }, true],
      ["!app", { app: "x" }, false],
      ["app in (a,b),tier=front,!canary", { app: "a", tier: "front" }, true],
      ["", {}, true],
    ]
    for (const [selector, labels, expected] of cases)
      expect([selector, labelSelector(selector)(o(labels))]).toEqual([selector, expected])
    expect(() => labelSelector("app in web")).toThrow(/unable to parse requirement/)
  })

  it("fields: metadata.* for every kind, pod fields for pods, others refused", () => {
    const pods = builtinTypes.find((t) => t.kind === "Pod")!
    const pod: KubeObject = {
      metadata: { name: "p", namespace: "ns" },
      spec: { nodeName: "n1" },
      status: { phase: "Running" },
    }
    expect(fieldSelector("metadata.name=p,metadata.namespace!=x", pods)(pod)).toBe(true)
    expect(fieldSelector("spec.nodeName==n1,status.phase=Running", pods)(pod)).toBe(true)
    expect(fieldSelector("status.phase!=Running", pods)(pod)).toBe(false)
    const configMaps = builtinTypes.find((t) => t.kind === "ConfigMap")!
    expect(() => fieldSelector("spec.nodeName=n1", configMaps)).toThrow("field label not supported: spec.nodeName")
  })
})
