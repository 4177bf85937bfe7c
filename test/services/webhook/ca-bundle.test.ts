import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { tagWebhookConfiguration } from "../../../src/services/revision-tags/tag-webhooks.js"
import {
  type OrchWebhookConfiguration,
  planCaBundle,
  servingCaBundle,
  toCaBundle,
  updateErrorReason,
} from "../../../src/services/webhook/ca-bundle.js"
import { opensslServerCert } from "../../support/openssl.js"

const config = (webhooks: unknown): OrchWebhookConfiguration =>
  ({
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: "mesh-mesh-system", resourceVersion: "5" },
    webhooks,
  }) as OrchWebhookConfiguration

describe("planCaBundle", () => {
  it("sets every webhook's caBundle and keeps every other field", () => {
    const c = config([
      {
        name: "a.mesh.io",
        clientConfig: { service: { name: "meshd", namespace: "mesh-system" } },
        failurePolicy: "Ignore",
      },
      { name: "b.mesh.io", clientConfig: { url: "https://x", caBundle: "b2xk" }, sideEffects: "None" },
    ])
    const plan = planCaBundle(c, "bmV3")
    expect(plan._tag).toBe("Patch")
    if (plan._tag !== "Patch") return
    expect(plan.webhooks).toBe(2)
    expect(plan.object.metadata.resourceVersion).toBe("5")
    expect(plan.object.webhooks).toEqual([
      {
        name: "a.mesh.io",
        clientConfig: { service: { name: "meshd", namespace: "mesh-system" }, caBundle: "bmV3" },
        failurePolicy: "Ignore",
      },
      { name: "b.mesh.io", clientConfig: { url: "https://x", caBundle: "bmV3" }, sideEffects: "None" },
    ])
  })

  it("is current when every webhook already has it, or there is none", () => {
    expect(planCaBundle(config([{ name: "a", clientConfig: { caBundle: "bmV3" } }]), "bmV3")).toEqual({
      _tag: "Current",
    })
    expect(planCaBundle(config(undefined), "bmV3")).toEqual({ _tag: "Current" })
    expect(planCaBundle(config([]), "bmV3")).toEqual({ _tag: "Current" })
  })

  it("patches every webhook of a revision tag, whatever its name (all of them point at meshd)", () => {
    const canonical = {
      metadata: { name: "mesh-sidecar-injector", labels: { "mesh.io/rev": "default" } },
      webhooks: [
        {
          name: "rev.namespace.sidecar-injector.mesh.io",
          clientConfig: { service: { name: "meshd", namespace: "mesh-system", path: "/inject" }, caBundle: "b2xk" },
        },
      ],
    }
    const tag = tagWebhookConfiguration({
      tag: "default",
      canonical,
      name: "mesh-revision-tag-default",
      autoInjectNamespaces: false,
    }) as unknown as OrchWebhookConfiguration
    const names = (tag.webhooks ?? []).map((w) => w.name)
    expect(names).toContain("namespace.sidecar-injector.mesh.io")
    const plan = planCaBundle(tag, "bmV3")
    expect(plan._tag).toBe("Patch")
    if (plan._tag !== "Patch") return
    expect(plan.webhooks).toBe(names.length)
    expect((plan.object.webhooks ?? []).map((w) => w.clientConfig?.caBundle)).toEqual(names.map(() => "bmV3"))
  })

  it("names the malformed field", () => {
    expect(planCaBundle(config({}), "x")).toEqual({ _tag: "Malformed", field: "webhooks", reason: "not a list" })
    expect(planCaBundle(config([{ name: "a", clientConfig: {} }, 3]), "x")).toMatchObject({ field: "webhooks[1]" })
    expect(planCaBundle(config([{ name: "a" }]), "x")).toMatchObject({ field: "webhooks[0].clientConfig" })
  })
})

describe("servingCaBundle", () => {
  const dir = mkdtempSync(join(tmpdir(), "ca-bundle-"))
  const served = opensslServerCert(dir, "served", "DNS:meshd.mesh-system.svc")
  const other = opensslServerCert(dir, "other", "DNS:other")

  it("keeps the CA that issued the served certificate, dropping unrelated roots", () => {
    const bundle = servingCaBundle({ clientCaPem: `${other.caPem}${served.caPem}`, certChainPem: served.certPem })
    expect(bundle.trim()).toBe(served.caPem.trim())
  })

  it("falls back to every CA when none issued the chain", () => {
    const bundle = servingCaBundle({ clientCaPem: other.caPem, certChainPem: served.certPem })
    expect(bundle.trim()).toBe(other.caPem.trim())
  })
})

describe("toCaBundle / updateErrorReason", () => {
  it("base64-encodes the PEM", () => {
    expect(Buffer.from(toCaBundle("-----BEGIN X-----\n"), "base64").toString()).toBe("-----BEGIN X-----\n")
  })
  it("bounds the reason label", () => {
    expect(updateErrorReason("Conflict")).toBe("Conflict")
    expect(updateErrorReason("ECONNREFUSED")).toBe("Unknown")
  })
})
