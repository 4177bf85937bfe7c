/**
 * Ambient data-plane mode (issue 35 group 4): Sidecars have no effect on ambient workloads
 * (MSH0167 instead of conflicts), and ambient namespaces are not asked to enable injection.
 */
import { describe, expect, it } from "@effect/vitest"
import { analyze, mesh, ns, summary } from "./support.js"

const NAME = "sidecar.SelectorAnalyzer"
const sidecar = (name: string, selector = "") =>
  mesh(
    "Sidecar",
    name,
    selector === ""
      ? "{egress: [{hosts: ['./*']}]}"
      : `{workloadSelector: {labels: ${selector}}, egress: [{hosts: ["./*"]}]}`,
  )
const ambientPod = `apiVersion: v1\nkind: Pod\nmetadata: {name: app-0, namespace: default, labels: {app: web}, annotations: {ambient.mesh.io/redirection: enabled}}\nspec: {containers: [{name: app, image: a}]}\n`
const sidecarPod = `apiVersion: v1\nkind: Pod\nmetadata: {name: app-0, namespace: default, labels: {app: web}}\nspec: {containers: [{name: app, image: a}]}\n`

describe("ambient workloads and Sidecars", () => {
  it("reports a Sidecar selecting an ambient pod as ineffective, once, instead of a conflict", () => {
    const found = analyze(NAME, ambientPod, sidecar("a", "{app: web}"), sidecar("b", "{app: web}"))
    expect(summary(found)).toEqual(["MSH0167 Sidecar/default/a", "MSH0167 Sidecar/default/b"])
    expect(found[0]?.text).toBe(
      "The policy has no impact: selected workload is in ambient mode, the policy has no impact.",
    )
    expect(summary(analyze(NAME, sidecarPod, sidecar("a", "{app: web}"), sidecar("b", "{app: web}")))).toEqual([
      "MSH0110 Sidecar/default/a",
      "MSH0110 Sidecar/default/b",
    ])
  })

  it("reports Sidecars without a selector in an ambient namespace as ineffective", () => {
    const found = analyze(NAME, ns("default", "{mesh.io/dataplane-mode: ambient}"), sidecar("only"))
    expect(found.map((m) => m.text)).toEqual([
      "The policy has no impact: namespace is in ambient mode, the policy has no impact.",
    ])
    // A namespace also labelled for sidecar injection is not ambient.
    expect(
      analyze(NAME, ns("default", "{mesh.io/dataplane-mode: ambient, mesh-injection: enabled}"), sidecar("only")),
    ).toEqual([])
  })
})
