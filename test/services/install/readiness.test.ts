/** When a Deployment or DaemonSet counts as ready, the install texts and the verify report. */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { componentTitle, installPrompt, isYes, uninstallPrompt } from "../../../src/services/install/install-text.js"
import { notReadyReason } from "../../../src/services/install/readiness.js"
import { resolveOperator } from "../../../src/services/install/resolve.js"
import { resolvedOperatorResource } from "../../../src/services/install/translate.js"
import { verifyReport } from "../../../src/services/install/verify.js"

const deployment = (generation: number, replicas: number | undefined, status: object) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "meshd", namespace: "mesh-system", generation },
  spec: replicas === undefined ? {} : { replicas },
  status,
})
const ready = (n: number, observedGeneration: number) => ({
  observedGeneration,
  updatedReplicas: n,
  readyReplicas: n,
  availableReplicas: n,
})

describe("readiness", () => {
  it("waits for the latest generation and every replica updated, ready and available", () => {
    expect(notReadyReason(deployment(2, 2, ready(2, 2)))).toBeUndefined()
    expect(notReadyReason(deployment(1, undefined, ready(1, 1)))).toBeUndefined()
    expect(notReadyReason(deployment(3, 2, ready(2, 2)))).toBe("generation 3 not yet observed (observed 2)")
    expect(notReadyReason(deployment(2, 2, { ...ready(2, 2), availableReplicas: 1 }))).toBe("1/2 replicas available")
    expect(notReadyReason(deployment(1, 3, {}))).toBe("generation 1 not yet observed (observed 0)")
  })

  it("a DaemonSet is ready when every scheduled pod is; other kinds when they exist", () => {
    const ds = (status: object) => ({ kind: "DaemonSet", metadata: { generation: 1 }, status })
    const full = { observedGeneration: 1, desiredNumberScheduled: 3, numberReady: 3, updatedNumberScheduled: 3 }
    expect(notReadyReason(ds(full))).toBeUndefined()
    expect(notReadyReason(ds({ ...full, numberReady: 1 }))).toBe("1/3 pods ready")
    expect(notReadyReason({ kind: "Service", metadata: {} })).toBeUndefined()
  })
})

describe("texts and reports", () => {
  const op = resolveOperator({ files: [], sets: ["profile=demo"], revision: "canary" })
  if (Either.isLeft(op)) throw new Error(op.left.join())

  it("asks before installing or uninstalling and proceeds only on yes", () => {
    expect(installPrompt(op.right, ["Base", "Pilot", "IngressGateways"])).toBe(
      'This will install the mesh "demo" profile (with components: Mesh core, Meshd, and Ingress gateways) with revision "canary" into the cluster. Proceed? (y/N) ',
    )
    expect(uninstallPrompt(false, "")).toContain("of the default revision")
    expect(uninstallPrompt(true, "")).toContain("every revision")
    expect([isYes("y"), isYes("Yes\n"), isYes(""), isYes(undefined), isYes("no")]).toEqual([
      true,
      true,
      false,
      false,
      false,
    ])
    expect(componentTitle("Pilot")).toBe("Meshd")
  })

  it("reports each kind, names what is missing or not ready, and sums up", () => {
    const expected = [
      { apiVersion: "v1", kind: "Service", metadata: { name: "meshd", namespace: "mesh-system" } },
      deployment(1, 1, {}),
    ]
    const good = verifyReport(expected, [expected[0], deployment(1, 1, ready(1, 1))])
    expect(good.failures).toEqual([])
    expect(good.lines).toEqual(["✔ Service: 1 of 1 checked successfully", "✔ Deployment: 1 of 1 checked successfully"])
    expect(good.summary).toBe("✔ Mesh is installed and verified successfully")
    const bad = verifyReport(expected, [undefined, deployment(1, 1, {})])
    expect(bad.failures).toEqual([
      "Service mesh-system/meshd: not found",
      "Deployment mesh-system/meshd: generation 1 not yet observed (observed 0)",
    ])
    expect(bad.summary).toContain("2 of 2 objects are missing or not ready")
  })

  it("translates to the resolved operator resource", () => {
    const resource = resolvedOperatorResource(op.right) as { metadata: object; spec: Record<string, unknown> }
    expect(resource.metadata).toEqual({ name: "installed-state-canary", namespace: "mesh-system" })
    expect(resource.spec.profile).toBe("demo")
    expect(resource.spec.revision).toBe("canary")
    expect(
      (resource.spec.components as { egressGateways: Array<{ enabled: boolean }> }).egressGateways[0]?.enabled,
    ).toBe(true)
  })
})
