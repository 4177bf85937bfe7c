/** The injection decision table (services/injection/decision.ts): each rule, and which rule wins over which. */
import { describe, expect, it } from "vitest"
import { defaultInjectionConfig } from "../../../src/services/injection/config.js"
import type { InjectionConfig, InjectionInput, Json } from "../../../src/services/injection/contract.js"
import { injectionDecision } from "../../../src/services/injection/decision.js"
import { defaultInjectionValues } from "../../../src/services/injection/values.js"

interface Case {
  readonly labels?: Record<string, string>
  readonly annotations?: Record<string, string>
  readonly namespace?: string
  readonly namespaceLabels?: Record<string, string>
  readonly config?: Partial<InjectionConfig>
  readonly values?: Json
  readonly revision?: string
  readonly hostNetwork?: boolean
  readonly mode?: "webhook" | "orch-inject"
}

const decide = (c: Case = {}) => {
  const input: InjectionInput = {
    pod: {
      metadata: { name: "p", labels: c.labels ?? { app: "web" }, annotations: c.annotations ?? {} },
      spec: { ...(c.hostNetwork ? { hostNetwork: true } : {}), containers: [{ name: "web", image: "web" }] },
    },
    namespace: { name: c.namespace ?? "apps", labels: c.namespaceLabels ?? { "mesh-injection": "enabled" } },
    config: { ...defaultInjectionConfig, ...c.config },
    values: c.values ?? defaultInjectionValues,
    meshConfig: {},
    revision: c.revision ?? "",
    ...(c.mode === undefined ? {} : { mode: c.mode }),
  }
  return injectionDecision(input)
}

const tag = (c: Case = {}) => decide(c)._tag
const reason = (c: Case) => {
  const d = decide(c)
  return d._tag === "Skip" ? d.reason : `injected: ${d.why}`
}

const optIn = { "sidecar.mesh.io/inject": "true" }
const optOut = { "sidecar.mesh.io/inject": "false" }
const never = { neverInjectSelector: [{ matchLabels: { app: "web" } }] }
const always = { alwaysInjectSelector: [{ matchLabels: { app: "web" } }] }

describe("rule 1: host network", () => {
  it("skips hostNetwork pods, even when they opt in", () => {
    expect(reason({ hostNetwork: true, labels: optIn })).toContain("host network")
  })
})

describe("rule 2: system namespaces", () => {
  it.each(["kube-system", "kube-public"])("skips %s, even for an opted-in pod", (namespace) => {
    expect(reason({ namespace, labels: optIn })).toContain("system namespace")
  })
  it("injects in other namespaces", () => expect(tag({ namespace: "kube-node-lease" })).toBe("Inject"))
})

describe("rule 3: already injected", () => {
  it.each(["sidecar.mesh.io/status", "sidecar.istio.io/status"])("does not skip a pod carrying %s", (key) => {
    // It is injected again (reinjection.ts); its other labels and annotations still decide.
    expect(tag({ annotations: { [key]: "{}" }, labels: optIn })).toBe("Inject")
    expect(tag({ annotations: { [key]: "{}" }, labels: optOut })).toBe("Skip")
  })
})

describe("rule 4: pod opt-out", () => {
  it("skips label false, annotation false, and any non-true value", () => {
    expect(reason({ labels: optOut })).toContain("opted out of injection (label sidecar.mesh.io/inject=false)")
    expect(reason({ annotations: optOut })).toContain(
      "opted out of injection (annotation sidecar.mesh.io/inject=false)",
    )
    expect(tag({ labels: { "sidecar.mesh.io/inject": "banana" } })).toBe("Skip")
  })
  it("the label wins over the annotation", () => {
    expect(tag({ labels: optIn, annotations: optOut, config: { policy: "disabled" } })).toBe("Inject")
    expect(tag({ labels: optOut, annotations: optIn })).toBe("Skip")
  })
  it("opting out beats alwaysInjectSelector", () => {
    expect(tag({ labels: { app: "web", ...optOut }, config: always })).toBe("Skip")
  })
  it("an empty value means no choice (policy decides)", () => {
    expect(tag({ annotations: { "sidecar.mesh.io/inject": "" } })).toBe("Inject")
    expect(tag({ annotations: { "sidecar.mesh.io/inject": "" }, config: { policy: "disabled" } })).toBe("Skip")
  })
})

describe("rule 5: namespace injection label", () => {
  it("disabled wins over a pod opt-in", () => {
    expect(reason({ namespaceLabels: { "mesh-injection": "disabled" }, labels: optIn })).toContain("injection disabled")
  })
  it("an unknown value selects nothing", () => {
    expect(reason({ namespaceLabels: { "mesh-injection": "yes" } })).toContain("neither enabled nor disabled")
  })
  it("reads the upstream istio-injection label", () => {
    expect(tag({ namespaceLabels: { "istio-injection": "disabled" } })).toBe("Skip")
    expect(tag({ namespaceLabels: { "istio-injection": "enabled" } })).toBe("Inject")
  })
  it("the mesh spelling wins over a conflicting upstream one, with a warning", () => {
    const d = decide({ namespaceLabels: { "mesh-injection": "enabled", "istio-injection": "disabled" } })
    expect(d._tag).toBe("Inject")
    expect(d.warnings).toEqual([
      'namespace label istio-injection="disabled" ignored: mesh-injection="enabled" takes precedence over the upstream spelling',
    ])
  })
})

describe("rule 6: serving revision", () => {
  it("an unlabelled namespace selects no revision", () => {
    expect(reason({ namespaceLabels: {} })).toContain("not labelled for injection")
  })
  it("a pod label opt-in selects the default revision; an annotation alone does not", () => {
    expect(tag({ namespaceLabels: {}, labels: optIn })).toBe("Inject")
    expect(tag({ namespaceLabels: {}, annotations: optIn })).toBe("Skip")
    expect(tag({ namespaceLabels: {}, labels: optIn, revision: "canary" })).toBe("Skip")
  })
  it("the namespace revision label must match this control plane's revision", () => {
    expect(tag({ namespaceLabels: { "mesh.io/rev": "canary" }, revision: "canary" })).toBe("Inject")
    expect(reason({ namespaceLabels: { "mesh.io/rev": "canary" } })).toContain('served by revision "canary"')
    expect(tag({ namespaceLabels: { "istio.io/rev": "canary" }, revision: "canary" })).toBe("Inject")
  })
  it('"" and "default" are the same revision', () => {
    expect(tag({ namespaceLabels: { "mesh.io/rev": "default" }, revision: "" })).toBe("Inject")
    expect(tag({ namespaceLabels: { "mesh-injection": "enabled" }, revision: "default" })).toBe("Inject")
  })
  it("mesh-injection=enabled selects the default revision, over a namespace revision label", () => {
    const labels = { "mesh-injection": "enabled", "mesh.io/rev": "canary" }
    expect(tag({ namespaceLabels: labels, revision: "" })).toBe("Inject")
    expect(tag({ namespaceLabels: labels, revision: "canary" })).toBe("Skip")
  })
  it("the namespace revision wins over the pod's; the pod's applies in an unlabelled namespace", () => {
    expect(tag({ namespaceLabels: { "mesh.io/rev": "a" }, labels: { "mesh.io/rev": "b" }, revision: "a" })).toBe(
      "Inject",
    )
    expect(tag({ namespaceLabels: {}, labels: { "mesh.io/rev": "b" }, revision: "b" })).toBe("Inject")
    expect(tag({ namespaceLabels: {}, labels: { "mesh.io/rev": "b" }, revision: "" })).toBe("Skip")
  })
  it("a revision mismatch beats a pod opt-in", () => {
    expect(tag({ namespaceLabels: { "mesh.io/rev": "a" }, labels: optIn, revision: "b" })).toBe("Skip")
  })
  it("enableNamespacesByDefault selects the default revision for unlabelled namespaces", () => {
    const values = { sidecarInjectorWebhook: { enableNamespacesByDefault: true } }
    expect(tag({ namespaceLabels: {}, values })).toBe("Inject")
    expect(tag({ namespaceLabels: { "mesh-injection": "disabled" }, values })).toBe("Skip")
  })
})

describe("rule 6: ambient pods get no sidecar (the node proxy serves them)", () => {
  const ambientNs = { "mesh.io/dataplane-mode": "ambient" }
  it("a pod of an ambient namespace is not injected, and the reason says ambient", () => {
    expect(reason({ namespaceLabels: ambientNs })).toBe(
      "pod is in ambient mode (namespace label mesh.io/dataplane-mode=ambient): the node proxy serves it, no sidecar is injected",
    )
    expect(reason({ namespaceLabels: { "istio.io/dataplane-mode": "ambient" } })).toContain(
      "namespace label istio.io/dataplane-mode=ambient",
    )
  })
  it("a pod labelled ambient in an unlabelled namespace is not injected", () => {
    expect(reason({ namespaceLabels: {}, labels: { app: "web", "mesh.io/dataplane-mode": "ambient" } })).toContain(
      "pod label mesh.io/dataplane-mode=ambient",
    )
  })
  it("a pod saying none in an ambient namespace is skipped for the usual reason (it is not ambient)", () => {
    const labels = { app: "web", "mesh.io/dataplane-mode": "none" }
    expect(reason({ namespaceLabels: ambientNs, labels })).toContain("not labelled for injection")
  })
  it("the webhook's own opt-outs still come first (waypoint pods carry sidecar.mesh.io/inject=false)", () => {
    const labels = { "sidecar.mesh.io/inject": "false", "mesh.io/dataplane-mode": "none" }
    expect(reason({ namespaceLabels: ambientNs, labels })).toContain("opted out of injection")
  })
  it("a sidecar label wins over ambient, as in the reference (its CNI then leaves the pod out of ambient)", () => {
    expect(tag({ namespaceLabels: { ...ambientNs, "mesh-injection": "enabled" } })).toBe("Inject")
    expect(tag({ namespaceLabels: { ...ambientNs, "mesh.io/rev": "canary" }, revision: "canary" })).toBe("Inject")
    expect(tag({ namespaceLabels: ambientNs, labels: { ...optIn, "mesh.io/dataplane-mode": "ambient" } })).toBe(
      "Inject",
    )
  })
})

describe("rule 7: pod opt-in", () => {
  it("injects under policy disabled and over neverInjectSelector", () => {
    expect(tag({ labels: { app: "web", ...optIn }, config: { policy: "disabled", ...never } })).toBe("Inject")
  })
  it.each(["y", "yes", "true", "on", "TRUE", "Yes"])("accepts %s", (value) => {
    expect(tag({ annotations: { "sidecar.mesh.io/inject": value }, config: { policy: "disabled" } })).toBe("Inject")
  })
})

describe("rule 8: selectors", () => {
  it("neverInjectSelector skips, and wins over alwaysInjectSelector", () => {
    expect(reason({ config: never })).toContain("neverInjectSelector[0]")
    expect(tag({ config: { ...never, ...always } })).toBe("Skip")
  })
  it("alwaysInjectSelector injects under policy disabled", () => {
    expect(reason({ config: { policy: "disabled", ...always } })).toContain("alwaysInjectSelector[0]")
  })
  it("matchExpressions and non-matching selectors", () => {
    const expr = (operator: string, values?: ReadonlyArray<string>) => ({
      policy: "disabled" as const,
      alwaysInjectSelector: [{ matchExpressions: [{ key: "app", operator, ...(values ? { values } : {}) }] }],
    })
    expect(tag({ config: expr("In", ["web", "api"]) })).toBe("Inject")
    expect(tag({ config: expr("NotIn", ["web"]) })).toBe("Skip")
    expect(tag({ config: expr("Exists") })).toBe("Inject")
    expect(tag({ config: expr("DoesNotExist") })).toBe("Skip")
  })
  it("an empty selector selects nothing; an invalid one is skipped with a warning", () => {
    expect(tag({ config: { neverInjectSelector: [{}] } })).toBe("Inject")
    const d = decide({ config: { neverInjectSelector: [{ matchExpressions: [{ key: "app", operator: "Near" }] }] } })
    expect(d._tag).toBe("Inject")
    expect(d.warnings[0]).toContain("neverInjectSelector[0] ignored")
  })
  it("selectors are not consulted by orch-inject (as the reference's kube-inject)", () => {
    expect(tag({ config: never, mode: "orch-inject" })).toBe("Inject")
  })
})

describe("rule 9: policy", () => {
  it("enabled injects, disabled skips", () => {
    expect(tag({ config: { policy: "enabled" } })).toBe("Inject")
    expect(reason({ config: { policy: "disabled" } })).toContain("policy is disabled")
  })
  it("orch-inject ignores namespace labels and the policy but honours opt-outs", () => {
    expect(
      tag({ mode: "orch-inject", namespaceLabels: { "mesh-injection": "disabled" }, config: { policy: "disabled" } }),
    ).toBe("Inject")
    expect(tag({ mode: "orch-inject", labels: optOut })).toBe("Skip")
    expect(tag({ mode: "orch-inject", hostNetwork: true })).toBe("Skip")
  })
})
