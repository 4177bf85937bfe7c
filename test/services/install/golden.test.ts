/**
 * The install manifest of every profile against `golden/<profile>.yaml`. `UPDATE_GOLDEN=1`
 * rewrites them; review their diff before keeping it. Also: which components each profile
 * renders, revision naming, and that rendering twice gives the same bytes.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { parseInjectionConfig } from "../../../src/services/injection/config.js"
import { parseInjectionValues } from "../../../src/services/injection/values.js"
import { manifestYaml, renderManifest } from "../../../src/services/install/manifest.js"
import { PROFILE_NAMES } from "../../../src/services/install/profiles.js"
import { resolveOperator } from "../../../src/services/install/resolve.js"
import { applyMeshConfig } from "../../../src/services/mesh-config/mesh-config.js"

const dir = join(import.meta.dirname, "golden")
const update = process.env.UPDATE_GOLDEN === "1"

const render = (sets: ReadonlyArray<string>, revision?: string) => {
  const op = resolveOperator({ files: [], sets, ...(revision !== undefined ? { revision } : {}) })
  if (Either.isLeft(op)) throw new Error(op.left.join("\n"))
  return renderManifest(op.right)
}
const ids = (objects: ReadonlyArray<Record<string, unknown>>) =>
  objects.map((o) => `${o.kind}/${(o.metadata as { name: string }).name}`)

describe("install manifest golden files", () => {
  for (const profile of PROFILE_NAMES) {
    it(profile, () => {
      const text = manifestYaml(render([`profile=${profile}`]))
      const file = join(dir, `${profile}.yaml`)
      if (update) writeFileSync(file, text)
      expect(text).toBe(readFileSync(file, "utf8"))
      expect(manifestYaml(render([`profile=${profile}`]))).toBe(text)
    })
  }
})

describe("components per profile", () => {
  it("default: CRDs, control plane, ingress gateway, both webhooks; no egress, no CNI", () => {
    const names = ids(render([]))
    expect(names).toContain("CustomResourceDefinition/virtualservices.networking.mesh.io")
    expect(names).toContain("Deployment/meshd")
    expect(names).toContain("Service/meshd")
    expect(names).toContain("Deployment/mesh-ingressgateway")
    expect(names).toContain("MutatingWebhookConfiguration/mesh-sidecar-injector")
    expect(names).toContain("ValidatingWebhookConfiguration/mesh-validator-mesh-system")
    expect(names).not.toContain("Deployment/mesh-egressgateway")
    expect(names.some((n) => n.startsWith("DaemonSet/"))).toBe(false)
  })
  it("demo adds the egress gateway; minimal has no gateway; empty renders nothing", () => {
    expect(ids(render(["profile=demo"]))).toContain("Deployment/mesh-egressgateway")
    expect(
      ids(render(["profile=minimal"])).some((n) => n.startsWith("Deployment/mesh-") && n.includes("gateway")),
    ).toBe(false)
    expect(render(["profile=empty"])).toEqual([])
  })
  it("remote: CRDs and the injection webhook, no control plane", () => {
    const names = ids(render(["profile=remote"]))
    expect(names).toContain("MutatingWebhookConfiguration/mesh-sidecar-injector")
    expect(names).not.toContain("Deployment/meshd")
  })
  it("ambient and components.cni.enabled render the CNI DaemonSet", () => {
    expect(ids(render(["profile=ambient"]))).toContain("DaemonSet/mesh-cni-node")
    expect(ids(render(["components.cni.enabled=true"]))).toContain("DaemonSet/mesh-cni-node")
  })
})

describe("revisions", () => {
  it("suffix names, label objects and select the revision's namespaces", () => {
    const objects = render(["profile=minimal"], "canary")
    const names = ids(objects)
    expect(names).toContain("Deployment/meshd-canary")
    expect(names).toContain("ConfigMap/mesh-canary")
    expect(names).toContain("ConfigMap/mesh-sidecar-injector-canary")
    expect(names).toContain("MutatingWebhookConfiguration/mesh-sidecar-injector-canary")
    const deployment = objects.find((o) => o.kind === "Deployment") as { metadata: { labels: Record<string, string> } }
    expect(deployment.metadata.labels["mesh.io/rev"]).toBe("canary")
    const webhook = objects.find((o) => o.kind === "MutatingWebhookConfiguration") as {
      webhooks: Array<{
        name: string
        clientConfig: { service: { name: string; path: string; port: number } }
        namespaceSelector: unknown
      }>
    }
    expect(webhook.webhooks.map((w) => w.name)).toEqual([
      "rev.namespace.sidecar-injector.mesh.io",
      "rev.object.sidecar-injector.mesh.io",
    ])
    expect(webhook.webhooks[0]?.clientConfig.service).toMatchObject({
      name: "meshd-canary",
      path: "/inject",
      port: 443,
    })
    expect(JSON.stringify(webhook.webhooks[0]?.namespaceSelector)).toContain('"values":["canary"]')
  })
})

describe("k8s settings reach the Deployment", () => {
  it("replicaCount, env, nodeSelector, resources", () => {
    const objects = render([
      "components.pilot.k8s.replicaCount=3",
      "components.pilot.k8s.env[0].name=FOO",
      "components.pilot.k8s.env[0].value=bar",
      "components.pilot.k8s.nodeSelector.disk=ssd",
      "components.pilot.k8s.resources.requests.cpu=1",
    ])
    const d = objects.find((o) => o.kind === "Deployment" && (o.metadata as { name: string }).name === "meshd") as {
      spec: {
        replicas: number
        template: {
          spec: {
            nodeSelector: unknown
            containers: Array<{ env: Array<{ name: string; value?: string }>; resources: unknown }>
          }
        }
      }
    }
    expect(d.spec.replicas).toBe(3)
    expect(d.spec.template.spec.nodeSelector).toEqual({ disk: "ssd" })
    expect(d.spec.template.spec.containers[0]?.env).toContainEqual({ name: "FOO", value: "bar" })
    expect(d.spec.template.spec.containers[0]?.resources).toEqual({ requests: { cpu: 1 } })
  })
})

describe("the ConfigMaps are what mesh-discovery reads", () => {
  it("mesh config, injector config and values parse with the readers' own parsers", () => {
    const objects = render(["profile=demo"])
    const data = (name: string) =>
      (
        objects.find((o) => o.kind === "ConfigMap" && (o.metadata as { name: string }).name === name) as {
          data: Record<string, string>
        }
      ).data
    const mesh = applyMeshConfig("mesh", data("mesh").mesh as string)
    expect(Either.isRight(mesh) && mesh.right.value.accessLogFile).toBe("/dev/stdout")
    expect(Either.isRight(parseInjectionConfig(data("mesh-sidecar-injector").config as string))).toBe(true)
    const values = parseInjectionValues(data("mesh-sidecar-injector").values as string)
    expect(Either.isRight(values) && (values.right.global as { hub?: string }).hub).toBe("docker.io/mesh")
  })
})
