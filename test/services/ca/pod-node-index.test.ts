import { describe, expect, it } from "@effect/vitest"
import { PodNodeIndex } from "../../../src/services/ca/pod-node-index.js"
import type { OrchPod } from "../../../src/services/orchestrator/objects.js"

const pod = (name: string, node: string | undefined, sa = "sleep", ns = "default"): OrchPod => ({
  metadata: { name, namespace: ns },
  spec: { ...(node !== undefined ? { nodeName: node } : {}), serviceAccountName: sa },
})

describe("PodNodeIndex", () => {
  it("follows pods being scheduled, moved and deleted", () => {
    const index = new PodNodeIndex()
    index.apply("added", pod("a", undefined))
    expect(index.has("n1", "default", "sleep")).toBe(false)
    index.apply("updated", pod("a", "n1"), pod("a", undefined))
    index.apply("added", pod("b", "n1"))
    expect(index.has("n1", "default", "sleep")).toBe(true)
    expect(index.has("n1", "default", "other")).toBe(false)
    expect(index.has("n1", "other", "sleep")).toBe(false)
    index.apply("deleted", pod("a", "n1"))
    expect(index.has("n1", "default", "sleep")).toBe(true)
    index.apply("updated", pod("b", "n2"), pod("b", "n1"))
    expect(index.has("n1", "default", "sleep")).toBe(false)
    expect(index.has("n2", "default", "sleep")).toBe(true)
    index.apply("deleted", pod("b", "n2"))
    expect(index.has("n2", "default", "sleep")).toBe(false)
  })
})
