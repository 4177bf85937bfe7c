/**
 * ConfigMap templates applied by the injector: merged after the built-in templates as the
 * reference merges templates, recorded in the status, placed with a native-sidecar proxy, given
 * the reference's template data; refusals name the template.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { defaultInjectionConfig, parseInjectionConfig } from "../../../src/services/injection/config.js"
import type { InjectionInput, InjectionOutcome } from "../../../src/services/injection/contract.js"
import { injectPod } from "../../../src/services/injection/inject.js"
import { parseStatus } from "../../../src/services/injection/status.js"
import { strategicMerge } from "../../../src/services/injection/strategic-merge.js"
import { defaultInjectionValues } from "../../../src/services/injection/values.js"
import { defaultMeshConfig } from "../../../src/services/mesh-config/index.js"

// biome-ignore lint/suspicious/noExplicitAny: injected pods are walked loosely in assertions
type Obj = Record<string, any>

const pod = (templates: string, extra: Obj = {}): Obj => ({
  metadata: {
    name: "web-7c9-abcde",
    labels: { app: "web", "pod-template-hash": "7c9" },
    annotations: { "inject.mesh.io/templates": templates, ...extra },
    ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-7c9", uid: "u", controller: true }],
  },
  spec: {
    serviceAccountName: "web",
    containers: [{ name: "web", image: "r/web:1", ports: [{ containerPort: 8080 }] }],
  },
})

const inject = (templates: Record<string, string>, p: Obj, more: Partial<InjectionInput> = {}): InjectionOutcome => {
  const text = `templates:\n${Object.entries(templates)
    .map(([n, t]) => `  ${n}: |\n${t.replace(/^/gm, "    ")}\n`)
    .join("")}`
  return injectPod({
    pod: p,
    namespace: { name: "shop", labels: {} },
    config: Either.getOrThrow(parseInjectionConfig(text)),
    values: defaultInjectionValues,
    meshConfig: defaultMeshConfig() as unknown as Obj,
    revision: "",
    mode: "orch-inject",
    ...more,
  })
}

const injected = (outcome: InjectionOutcome): Obj => {
  if (outcome._tag !== "Injected") throw new Error(JSON.stringify(outcome))
  return outcome.pod as Obj
}

describe("strategicMerge", () => {
  it("merges lists on their keys, replaces others, removes nulls, obeys $patch", () => {
    const base = {
      spec: {
        containers: [{ name: "a", image: "x", env: [{ name: "A", value: "1" }], args: ["1"] }],
        volumes: [
          { name: "v", emptyDir: {} },
          { name: "gone", emptyDir: {} },
        ],
        tolerations: [{ key: "k" }],
      },
    }
    const patch = {
      spec: {
        containers: [
          {
            name: "a",
            env: [
              { name: "B", value: "2" },
              { name: "A", value: "3" },
            ],
            args: ["2"],
          },
          { name: "b", image: "y", ports: [{ containerPort: 1, name: null }] },
        ],
        volumes: [
          { name: "v", emptyDir: null, csi: { driver: "d" } },
          { name: "gone", $patch: "delete" },
        ],
        tolerations: [{ key: "other" }],
        $setElementOrder: [],
      },
    }
    expect(strategicMerge(base, patch)).toEqual({
      spec: {
        containers: [
          {
            name: "a",
            image: "x",
            env: [
              { name: "A", value: "3" },
              { name: "B", value: "2" },
            ],
            args: ["2"],
          },
          { name: "b", image: "y", ports: [{ containerPort: 1 }] },
        ],
        volumes: [{ name: "v", csi: { driver: "d" } }],
        tolerations: [{ key: "other" }],
      },
    })
    expect(strategicMerge({ a: { b: 1, c: 2 } }, { a: { $patch: "replace", d: 3 } })).toEqual({ a: { d: 3 } })
  })
})

describe("ConfigMap templates in injectPod", () => {
  it("run with the reference's template data", () => {
    const template = [
      "metadata:",
      "  annotations:",
      "    t/kind: {{ .TypeMeta.Kind }}/{{ .TypeMeta.APIVersion }}",
      "    t/workload: {{ .DeploymentMeta.Namespace }}/{{ .DeploymentMeta.Name }}",
      "    t/sa: {{ .Spec.ServiceAccountName }}",
      "    t/rev: {{ .Revision | default `default` | quote }}",
      "    t/image: {{ .ProxyImage }}",
      "    t/uid: {{ .ProxyUID | quote }}",
      "    t/inbound: {{ .InboundTrafficPolicyMode }}",
      "    t/native: {{ .NativeSidecars | quote }}",
      "    t/trust: {{ valueOrDefault .MeshConfig.TrustDomain `none` }}",
      "    t/hub: {{ .Values.global.hub }}",
      "    t/pc: {{ protoToJSON .ProxyConfig | squote }}",
      "    t/ports: {{ includeInboundPorts .Spec.Containers | quote }}",
    ].join("\n")
    const out = injected(inject({ data: template }, pod("data")))
    expect(out.metadata.annotations).toMatchObject({
      "t/kind": "Deployment/apps/v1",
      "t/workload": "shop/web",
      "t/sa": "web",
      "t/rev": "default",
      "t/image": expect.stringContaining("proxyv2"),
      "t/uid": "1337",
      "t/inbound": "passthrough",
      "t/native": "false",
      "t/trust": "cluster.local",
      "t/hub": defaultInjectionValues.global && (defaultInjectionValues.global as Obj).hub,
      "t/pc": "{}",
      "t/ports": "8080",
    })
  })

  it("merge after the sidecar template, adding to the status what they added", () => {
    const template = [
      "spec:",
      "  initContainers:",
      "  - name: fetch-certs",
      "    image: r/fetch:1",
      "  containers:",
      "  - name: mesh-proxy",
      "    env:",
      "    - {name: EXTRA, value: '1'}",
      "  - name: web",
      "    env:",
      "    - {name: FROM_TEMPLATE, value: 'yes'}",
      "  volumes:",
      "  - name: extra",
      "    emptyDir: {}",
    ].join("\n")
    const out = injected(inject({ extra: template }, pod("sidecar,extra")))
    const proxy = out.spec.containers.find((c: Obj) => c.name === "mesh-proxy")
    expect(proxy.env.at(-1)).toEqual({ name: "EXTRA", value: "1" })
    expect(proxy.image).toContain("proxyv2")
    expect(out.spec.containers.find((c: Obj) => c.name === "web").env).toEqual([
      { name: "FROM_TEMPLATE", value: "yes" },
    ])
    const status = parseStatus(out.metadata.annotations["sidecar.mesh.io/status"])
    expect(status?.initContainers).toContain("fetch-certs")
    expect(status?.containers).toEqual(["mesh-proxy"])
    expect(status?.volumes.at(-1)).toBe("extra")
  })

  it("with a native-sidecar proxy, a template's mesh-proxy merges into the init container", () => {
    const template = "spec:\n  containers:\n  - name: mesh-proxy\n    env:\n    - {name: EXTRA, value: '1'}\n"
    const out = injected(inject({ extra: template }, pod("sidecar,extra", { "sidecar.mesh.io/nativeSidecar": "true" })))
    expect(out.spec.containers.map((c: Obj) => c.name)).toEqual(["web"])
    const proxy = out.spec.initContainers.find((c: Obj) => c.name === "mesh-proxy")
    expect(proxy.restartPolicy).toBe("Always")
    expect(proxy.env.at(-1)).toEqual({ name: "EXTRA", value: "1" })
  })

  it("a pod selecting only a ConfigMap template gets only what it renders", () => {
    const out = injected(inject({ only: "metadata:\n  labels:\n    only: 'yes'\n" }, pod("only")))
    expect(out.spec.containers.map((c: Obj) => c.name)).toEqual(["web"])
    expect(out.metadata.labels.only).toBe("yes")
  })

  it("refusals name the template: a run error, output that is not a partial pod", () => {
    const failing = inject({ bad: "{{ index .Spec.Containers 9 }}" }, pod("bad"))
    expect(failing._tag === "Refused" && failing.reason).toMatch(
      /^template "bad" failed: template: bad:1: executing "bad" at <index>: error calling index: index out of range: 9/,
    )
    const list = inject({ list: "- a\n- b\n" }, pod("list"))
    expect(list._tag === "Refused" && list.reason).toContain('template "list" output: must be a YAML mapping')
    const spec = inject({ spec: "spec: [1]\n" }, pod("spec"))
    expect(spec._tag === "Refused" && spec.reason).toBe('template "spec" output: spec must be a mapping')
    const yaml = inject({ y: "a: [\n" }, pod("y"))
    expect(yaml._tag === "Refused" && yaml.reason).toContain('template "y" output: YAML syntax error')
  })

  it("a ConfigMap text named like a built-in template is not run", () => {
    const out = injected(inject({ sidecar: "{{ fail `never` }}" }, pod("sidecar")))
    expect(out.spec.containers.map((c: Obj) => c.name)).toEqual(["web", "mesh-proxy"])
    expect(defaultInjectionConfig.executableTemplates).toEqual({})
  })
})
