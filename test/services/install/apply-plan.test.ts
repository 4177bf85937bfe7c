/** Ownership labels, apply order, prune and uninstall selection of the install plan. */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  deletionOrder,
  INSTALL_KINDS,
  installPlan,
  pruneSelection,
  refKey,
  refOf,
  revisionSelector,
  uninstallSelection,
} from "../../../src/services/install/apply-plan.js"
import { renderManifest } from "../../../src/services/install/manifest.js"
import { OPERATOR_LABEL } from "../../../src/services/install/names.js"
import { type ResolvedOperator, resolveOperator } from "../../../src/services/install/resolve.js"

const resolve = (sets: ReadonlyArray<string>, revision?: string): ResolvedOperator => {
  const r = resolveOperator({ files: [], sets, ...(revision === undefined ? {} : { revision }) })
  if (Either.isLeft(r)) throw new Error(r.left.join("\n"))
  return r.right
}
const planOf = (sets: ReadonlyArray<string>, revision?: string) => {
  const op = resolve(sets, revision)
  return installPlan(op, renderManifest(op))
}
const ids = (objects: ReadonlyArray<object>) => objects.map((o) => refKey(refOf(o as never)))

describe("install plan", () => {
  it("labels every object with its owner and revision, CRDs apart and first", () => {
    const plan = planOf([], "canary")
    const all = [...plan.crds, ...plan.objects]
    expect(plan.crds.length).toBeGreaterThan(0)
    expect(plan.crds.every((o) => o.kind === "CustomResourceDefinition")).toBe(true)
    expect(plan.objects.some((o) => o.kind === "CustomResourceDefinition")).toBe(false)
    for (const o of [...all, plan.namespaceObject]) {
      const labels = (o.metadata as { labels: Record<string, string> }).labels
      expect(labels[OPERATOR_LABEL]).toBe("installed-state-canary")
      expect(labels["mesh.io/rev"]).toBe("canary")
    }
    expect(revisionSelector(resolve([], "canary"))).toBe(
      "install.operator.mesh.io/owning-resource=installed-state-canary,install.operator.mesh.io/owning-resource-namespace=mesh-system,mesh.io/rev=canary",
    )
  })

  it("reports components in a fixed order and knows every kind the profiles render", () => {
    expect(planOf(["profile=demo"]).components).toEqual(["Base", "Pilot", "IngressGateways", "EgressGateways"])
    for (const profile of ["default", "demo", "ambient", "minimal"]) {
      const plan = planOf([`profile=${profile}`])
      for (const o of [...plan.crds, ...plan.objects])
        expect(INSTALL_KINDS.map((k) => `${k.apiVersion} ${k.kind}`)).toContain(`${o.apiVersion} ${o.kind}`)
    }
  })

  it("prunes what the previous install owned and no longer renders, never CRDs or the namespace", () => {
    const before = planOf([])
    const after = planOf(["components.ingressGateways[0].enabled=false"])
    const owned = [before.namespaceObject, ...before.crds, ...before.objects]
    const pruned = pruneSelection(owned, after)
    expect(pruned.length).toBeGreaterThan(0)
    expect(pruned.every((o) => (o.metadata as { name: string }).name.includes("ingressgateway"))).toBe(true)
    expect(ids(pruned)).toContain("apps/Deployment/mesh-system/mesh-ingressgateway")
    // Webhooks and autoscalers go before the workloads they act on.
    expect(pruned.map((o) => o.kind).indexOf("HorizontalPodAutoscaler")).toBeLessThan(
      pruned.map((o) => o.kind).indexOf("Deployment"),
    )
    const withoutBase = planOf(["components.base.enabled=false"])
    expect(pruneSelection(owned, withoutBase).filter((o) => o.kind === "CustomResourceDefinition")).toEqual([])
  })

  it("uninstalls one revision without the shared CRDs and namespace; --purge takes everything, namespace last", () => {
    const plan = planOf([])
    const found = [plan.namespaceObject, ...plan.crds, ...plan.objects]
    const revision = uninstallSelection(found, false)
    expect(revision.some((o) => o.kind === "CustomResourceDefinition" || o.kind === "Namespace")).toBe(false)
    expect(revision.length).toBe(plan.objects.length)
    const purge = uninstallSelection(found, true)
    expect(purge.length).toBe(found.length)
    expect(purge[purge.length - 1]?.kind).toBe("Namespace")
    expect(deletionOrder(found)[0]?.kind).toBe("ValidatingWebhookConfiguration")
  })
})
