/**
 * Which pods race repair acts on and how: the validation init container's last termination must
 * match the exit code (0 = any) and message (trimmed; "" = any); pods without the sidecar
 * annotation, or whose init container has since succeeded, are left alone; delete wins over
 * label; an already labelled pod is skipped; the watch is narrowed to the node.
 */
import { describe, expect, it } from "vitest"
import {
  isBrokenPod,
  type RepairPod,
  type RepairSettings,
  repairActionFor,
  repairSelectors,
} from "../../../src/services/cni/repair-decision.js"

const settings: RepairSettings = {
  deletePods: false,
  labelPods: true,
  labelKey: "cni.mesh.io/uninitialized",
  labelValue: "true",
  sidecarAnnotation: "sidecar.mesh.io/status",
  initContainerName: "mesh-validation",
  initContainerExitCode: 126,
  initContainerTerminationMessage: "",
  nodeName: "node-1",
  fieldSelectors: "",
  labelSelectors: "",
}

const pod = (
  last: { exitCode: number; message?: string } | undefined,
  options: {
    annotated?: boolean
    container?: string
    current?: { exitCode: number; reason?: string }
    labelled?: boolean
  } = {},
): RepairPod => ({
  metadata: {
    name: "p",
    namespace: "default",
    uid: "u1",
    resourceVersion: "7",
    ...(options.annotated === false ? {} : { annotations: { "sidecar.mesh.io/status": "{}" } }),
    ...(options.labelled === true ? { labels: { "cni.mesh.io/uninitialized": "true" } } : {}),
  },
  status: {
    initContainerStatuses: [
      {
        name: options.container ?? "mesh-validation",
        ...(options.current !== undefined ? { state: { terminated: options.current } } : {}),
        ...(last !== undefined ? { lastState: { terminated: last } } : {}),
      },
    ],
  },
})

describe("isBrokenPod", () => {
  it("matches the configured exit code of the validation container's last termination", () => {
    expect(isBrokenPod(pod({ exitCode: 126 }), settings)).toBe(true)
    expect(isBrokenPod(pod({ exitCode: 1 }), settings)).toBe(false)
    expect(isBrokenPod(pod(undefined), settings)).toBe(false)
    expect(isBrokenPod(pod({ exitCode: 1 }), { ...settings, initContainerExitCode: 0 })).toBe(true)
  })

  it("ignores pods without the sidecar annotation and other init containers", () => {
    expect(isBrokenPod(pod({ exitCode: 126 }, { annotated: false }), settings)).toBe(false)
    expect(isBrokenPod(pod({ exitCode: 126 }, { annotated: false }), { ...settings, sidecarAnnotation: "" })).toBe(true)
    expect(isBrokenPod(pod({ exitCode: 126 }, { container: "other" }), settings)).toBe(false)
  })

  it("never calls a pod broken once its init container succeeded", () => {
    expect(isBrokenPod(pod({ exitCode: 126 }, { current: { exitCode: 0, reason: "Completed" } }), settings)).toBe(false)
    expect(isBrokenPod(pod({ exitCode: 126 }, { current: { exitCode: 126, reason: "Error" } }), settings)).toBe(true)
  })

  it("compares the termination message trimmed when one is configured", () => {
    const withMessage = { ...settings, initContainerTerminationMessage: " CNI not ready \n" }
    expect(isBrokenPod(pod({ exitCode: 126, message: "CNI not ready" }), withMessage)).toBe(true)
    expect(isBrokenPod(pod({ exitCode: 126, message: "something else" }), withMessage)).toBe(false)
  })
})

describe("repairActionFor", () => {
  it("labels, skips a labelled pod, deletes with preconditions when asked, and does nothing otherwise", () => {
    expect(repairActionFor(pod({ exitCode: 126 }), settings)).toEqual({
      _tag: "Label",
      patch: { metadata: { labels: { "cni.mesh.io/uninitialized": "true" } } },
    })
    expect(repairActionFor(pod({ exitCode: 126 }, { labelled: true }), settings)._tag).toBe("AlreadyLabelled")
    expect(repairActionFor(pod({ exitCode: 126 }), { ...settings, deletePods: true })).toEqual({
      _tag: "Delete",
      uid: "u1",
      resourceVersion: "7",
    })
    expect(repairActionFor(pod({ exitCode: 126 }), { ...settings, labelPods: false })._tag).toBe("None")
    expect(repairActionFor(pod({ exitCode: 2 }), settings)._tag).toBe("None")
  })
})

describe("repairSelectors", () => {
  it("narrows the watch to the node, after the configured selectors", () => {
    expect(repairSelectors(settings)).toEqual({ fieldSelector: "spec.nodeName=node-1", labelSelector: "" })
    expect(repairSelectors({ ...settings, fieldSelectors: "status.phase=Pending", labelSelectors: "app=x" })).toEqual({
      fieldSelector: "status.phase=Pending,spec.nodeName=node-1",
      labelSelector: "app=x",
    })
    expect(repairSelectors({ ...settings, nodeName: "" }).fieldSelector).toBe("")
  })
})
