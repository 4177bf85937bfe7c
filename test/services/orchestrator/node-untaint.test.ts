/** Which nodes lose the CNI not-ready taint, and the patch that removes it. */
import { describe, expect, it } from "vitest"
import {
  isPodReady,
  NOT_READY_TAINT,
  nodesToUntaint,
  untaintPatch,
} from "../../../src/services/orchestrator/node-untaint.js"
import type { OrchNode, OrchPod } from "../../../src/services/orchestrator/objects.js"

const node = (name: string, taints: Array<string>): OrchNode => ({
  metadata: { name, resourceVersion: "7" },
  spec: { taints: taints.map((key) => ({ key, effect: "NoSchedule" })) },
})
const pod = (nodeName: string, ready: boolean, deleting = false): OrchPod => ({
  metadata: { name: `cni-${nodeName}`, ...(deleting ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}) },
  spec: { nodeName },
  status: { conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
})

describe("node untaint", () => {
  it("untaints tainted nodes whose CNI pod is ready, only those", () => {
    const nodes = [
      node("a", [NOT_READY_TAINT]),
      node("b", [NOT_READY_TAINT]),
      node("c", []),
      node("d", [NOT_READY_TAINT]),
    ]
    const pods = [pod("a", true), pod("b", false), pod("c", true), pod("d", true, true)]
    expect(nodesToUntaint(nodes, pods).map((n) => n.metadata.name)).toEqual(["a"])
  })

  it("a pod is ready by its Ready condition and not while it is deleted", () => {
    expect(isPodReady(pod("a", true))).toBe(true)
    expect(isPodReady({ metadata: { name: "p" }, status: { phase: "Running" } })).toBe(false)
    expect(isPodReady(pod("a", true, true))).toBe(false)
  })

  it("keeps other taints, drops the field when none remain, on the node's version", () => {
    expect(untaintPatch(node("a", ["other", NOT_READY_TAINT]))).toEqual({
      metadata: { resourceVersion: "7" },
      spec: { taints: [{ key: "other", effect: "NoSchedule" }] },
    })
    expect(untaintPatch(node("a", [NOT_READY_TAINT]))).toEqual({
      metadata: { resourceVersion: "7" },
      spec: { taints: null },
    })
  })
})
