import { describe, expect, it } from "vitest"
import type { ObjectSummary } from "../../../src/services/precheck/checks.js"
import {
  isInjector,
  namespaceRevision,
  namespaceTable,
  selectedNamespaces,
  webhookTable,
} from "../../../src/services/precheck/injector-list.js"

const ns = (name: string, labels: Record<string, string> = {}): ObjectSummary => ({
  name,
  namespace: "",
  labels,
  annotations: {},
})
const pod = (namespace: string, revision?: string, labels: Record<string, string> = {}): ObjectSummary => ({
  name: `p-${Math.random()}`,
  namespace,
  labels,
  annotations: revision === undefined ? {} : { "sidecar.mesh.io/status": JSON.stringify({ revision }) },
})

const namespaces = [
  ns("default", { "mesh-injection": "enabled" }),
  ns("canary-ns", { "mesh.io/rev": "canary" }),
  ns("off", { "mesh-injection": "disabled", "mesh.io/rev": "canary" }),
  ns("plain"),
]

describe("namespaceTable", () => {
  it("lists injection-enabled namespaces with their revision and pod revisions", () => {
    expect(namespaceRevision(namespaces[0]!)).toBe("default")
    expect(namespaceRevision(namespaces[2]!)).toBeUndefined()
    const text = namespaceTable(namespaces, [
      pod("default", "default"),
      pod("default", "default"),
      pod("default"),
      pod("canary-ns", "canary"),
      pod("canary-ns", "1-20"),
      pod("plain", "default"),
    ])
    const lines = text.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^NAMESPACE +MESH-REVISION +POD-REVISIONS$/)
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(/^canary-ns +canary +1-20: 1 canary: 1$/),
      expect.stringMatching(/^default +default +<non-mesh>: 1 default: 2$/),
    ])
  })
})

const hook = (name: string, labels: Record<string, string>, selectors: ReadonlyArray<unknown>) => ({
  metadata: { name, labels },
  webhooks: selectors.map((s, i) => ({ name: `w${i}.sidecar-injector.mesh.io`, namespaceSelector: s })),
})

describe("webhookTable", () => {
  const defaultHook = hook("mesh-sidecar-injector", { "mesh.io/rev": "default" }, [
    { matchExpressions: [{ key: "mesh.io/rev", operator: "In", values: ["default"] }] },
    { matchExpressions: [{ key: "mesh-injection", operator: "In", values: ["enabled"] }] },
  ])
  const canaryHook = hook("mesh-sidecar-injector-canary", { "mesh.io/rev": "canary" }, [
    {
      matchExpressions: [
        { key: "mesh.io/rev", operator: "In", values: ["canary"] },
        { key: "mesh-injection", operator: "DoesNotExist" },
      ],
    },
  ])
  const tagHook = hook("mesh-revision-tag-prod", { "mesh.io/rev": "canary", "mesh.io/tag": "prod" }, [
    { matchLabels: { "mesh.io/rev": "prod" } },
  ])
  const other = { metadata: { name: "cert-manager-webhook" }, webhooks: [{ name: "webhook.cert-manager.io" }] }

  it("selects namespaces by each webhook's selector", () => {
    expect(selectedNamespaces(defaultHook, namespaces)).toEqual(["default"])
    expect(selectedNamespaces(canaryHook, namespaces)).toEqual(["canary-ns"])
    expect(selectedNamespaces({ metadata: {}, webhooks: [{}] }, namespaces)).toHaveLength(4)
    expect(isInjector(other)).toBe(false)
  })

  it("prints one row per injector, with its tag", () => {
    const lines = webhookTable([other, tagHook, defaultHook, canaryHook], namespaces).trimEnd().split("\n")
    expect(lines[0]).toMatch(/^MESH-REVISION +TAG +NAMESPACES$/)
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(/^canary +<no tag> +canary-ns$/),
      expect.stringMatching(/^canary +prod +<none>$/),
      expect.stringMatching(/^default +<no tag> +default$/),
    ])
  })
})
