import { describe, expect, it } from "@effect/vitest"
import { planRootCert, wantsRootCert } from "../../../src/services/ca/root-cert-configmap.js"

const ns = (name: string, extra: object = {}) => ({ metadata: { name }, ...extra })

describe("root-cert ConfigMap", () => {
  it("is wanted in live, non-system namespaces (only the watched one when set)", () => {
    expect(wantsRootCert(ns("default"), "")).toBe(true)
    expect(wantsRootCert(undefined, "")).toBe(false)
    expect(wantsRootCert(ns("kube-system"), "")).toBe(false)
    expect(wantsRootCert(ns("gone", { status: { phase: "Terminating" } }), "")).toBe(false)
    expect(wantsRootCert({ metadata: { name: "gone", deletionTimestamp: "2024-01-01T00:00:00Z" } }, "")).toBe(false)
    expect(wantsRootCert(ns("default"), "apps")).toBe(false)
    expect(wantsRootCert(ns("apps"), "apps")).toBe(true)
  })

  it("creates, updates only the key (keeping the rest), or leaves alone", () => {
    const created = planRootCert("apps", undefined, "PEM")
    expect(created).toEqual({
      _tag: "Create",
      configMap: {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "mesh-ca-root-cert", namespace: "apps", labels: { "mesh.io/config": "true" } },
        data: { "root-cert.pem": "PEM" },
      },
    })
    const existing = {
      metadata: { name: "mesh-ca-root-cert", namespace: "apps", resourceVersion: "7" },
      data: { "root-cert.pem": "OLD", other: "x" },
    }
    expect(planRootCert("apps", existing, "PEM")).toEqual({
      _tag: "Update",
      configMap: { ...existing, apiVersion: "v1", kind: "ConfigMap", data: { "root-cert.pem": "PEM", other: "x" } },
    })
    expect(planRootCert("apps", { ...existing, data: { "root-cert.pem": "PEM" } }, "PEM")).toEqual({ _tag: "None" })
  })
})
