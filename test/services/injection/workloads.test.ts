/**
 * `orch-inject`'s document handling with the real injector: every supported kind's pod template
 * is injected where it lives, other kinds and groups pass through as written, documents keep
 * their order, a second run over the output changes nothing, and a bad document is named.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { parseAllDocuments } from "yaml"
import {
  defaultInjectionConfig,
  defaultInjectionValues,
  InjectAnnotations,
  type Json,
} from "../../../src/services/injection/index.js"
import { ContainerNames } from "../../../src/services/injection/names.js"
import {
  type InjectedWorkloads,
  injectWorkloads,
  type WorkloadInjectionInputs,
} from "../../../src/services/injection/workloads.js"
import { defaultMeshConfig } from "../../../src/services/mesh-config/mesh-config.js"

// biome-ignore lint/suspicious/noExplicitAny: parsed orchestrator objects are walked loosely in assertions
type Loose = any

const inputs: WorkloadInjectionInputs = {
  config: defaultInjectionConfig,
  values: defaultInjectionValues,
  meshConfig: defaultMeshConfig() as unknown as Json,
  revision: "",
}

const TEMPLATE = `metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: example/web:1.0
        ports: [{containerPort: 8080}]`

const workload = (apiVersion: string, kind: string, name = "web") => `apiVersion: ${apiVersion}
kind: ${kind}
metadata:
  name: ${name}
  namespace: shop
spec:
  template:
    ${TEMPLATE}
`

const inject = (text: string): InjectedWorkloads => {
  const result = injectWorkloads(text, inputs)
  if (Either.isLeft(result)) throw new Error(`document ${result.left.documentIndex}: ${result.left.message}`)
  return result.right
}

const documents = (text: string): Array<Loose> => parseAllDocuments(text).map((d) => d.toJS())

const proxyOf = (podSpec: Loose): Loose =>
  (podSpec.containers as Array<Loose>).find((c) => c.name === ContainerNames.proxy)

const expectInjected = (template: Loose) => {
  expect(proxyOf(template.spec)).toBeDefined()
  expect(template.spec.containers[0].name).toBe("web")
  expect(template.metadata.annotations[InjectAnnotations.status]).toBeDefined()
}

describe("injectWorkloads", () => {
  it.each([
    ["apps/v1", "Deployment", "deployments"],
    ["apps/v1", "StatefulSet", "statefulsets"],
    ["apps/v1", "DaemonSet", "daemonsets"],
    ["apps/v1", "ReplicaSet", "replicasets"],
    ["extensions/v1beta1", "Deployment", "deployments"],
    ["v1", "ReplicationController", "replicationcontrollers"],
    ["batch/v1", "Job", "jobs"],
  ])("injects the pod template of %s %s as that workload's pod", (apiVersion, kind, plural) => {
    const [object] = documents(inject(workload(apiVersion, kind)).text)
    expectInjected(object.spec.template)
    // The workload (kind, name, namespace) is what the proxy is told it belongs to.
    expect(JSON.stringify(object.spec.template)).toContain(`namespaces/shop/${plural}/web`)
    // Nothing but the template changed.
    expect({ ...object, spec: {} }).toEqual({ ...documents(workload(apiVersion, kind))[0], spec: {} })
  })

  it("injects a CronJob's job template and a bare Pod", () => {
    const cron = `apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: shop}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: web, image: example/web:1.0}]
`
    const pod = `apiVersion: v1
kind: Pod
metadata: {name: debug}
spec:
  containers: [{name: web, image: example/web:1.0}]
`
    const [cronJob, bare] = documents(inject(`${cron}---\n${pod}`).text)
    expect(proxyOf(cronJob.spec.jobTemplate.spec.template.spec)).toBeDefined()
    expect(cronJob.spec.schedule).toBe("0 3 * * *")
    expect(proxyOf(bare.spec)).toBeDefined()
    expect(bare.metadata.name).toBe("debug")
    // The Pod named no namespace: it is injected as one of `default`, and still names none.
    expect(bare.metadata.namespace).toBeUndefined()
    expect(JSON.stringify(bare)).toContain("namespaces/default/")
  })

  it("injects the items of a List and leaves its other items alone", () => {
    const list = `apiVersion: v1
kind: List
items:
- ${workload("apps/v1", "Deployment").replaceAll("\n", "\n  ").trimEnd()}
- apiVersion: v1
  kind: Service
  metadata: {name: web}
  spec: {ports: [{port: 80}]}
`
    const [out] = documents(inject(list).text)
    expectInjected(out.items[0].spec.template)
    expect(out.items[1]).toEqual(documents(list)[0].items[1])
  })

  it("passes other kinds, other groups' look-alikes and non-objects through as written, in order", () => {
    const service = "# the service\napiVersion: v1\nkind: Service\nmetadata:\n  name: web # its name\n"
    const lookalike = workload("example.com/v1", "Deployment", "custom")
    const scalar = "just a string\n"
    const deployment = workload("apps/v1", "Deployment")
    const out = inject([service, lookalike, scalar, deployment].join("---\n")).text
    const parts = out.split(/^---\n/m)
    expect(parts).toHaveLength(4)
    expect(parts[0]).toBe(service)
    expect(parts[1]).toBe(lookalike)
    expect(parts[2]).toBe(scalar)
    expectInjected(documents(parts[3]!)[0].spec.template)
  })

  it("writes untouched documents without their own markers, one separator between documents", () => {
    const input = [
      "# head\napiVersion: v1\nkind: Service\nmetadata: {name: a}\n...\n",
      "--- # b\napiVersion: v1\nkind: Service\nmetadata: {name: b}\n",
      "--- {apiVersion: v1, kind: ConfigMap}",
    ].join("")
    expect(inject(input).text).toBe(
      "# head\napiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\n# b\napiVersion: v1\nkind: Service\nmetadata: {name: b}\n---\n{apiVersion: v1, kind: ConfigMap}\n",
    )
    // Directives cannot follow the separator: such a document is rendered again.
    expect(inject("%YAML 1.2\n---\napiVersion: v1\nkind: Service\n").text).toBe("apiVersion: v1\nkind: Service\n")
  })

  it("drops empty documents and writes nothing for empty input", () => {
    expect(inject("").text).toBe("")
    const out = inject(`---\n---\n${workload("v1", "Service")}---\n# only a comment\n`).text
    expect(documents(out)).toHaveLength(1)
  })

  it("changes nothing when run over its own output", () => {
    const input = [workload("apps/v1", "Deployment"), "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n"].join(
      "---\n",
    )
    const first = inject(input)
    expect(first.text).not.toBe(input)
    const second = inject(first.text)
    expect(second.text).toBe(first.text)
    // Injected again (as the reference does), into the same pod template.
    expect(second.notes).toEqual([])
  })

  it("notes a pod template that opts out, and leaves it as written", () => {
    const optOut = workload("apps/v1", "Deployment").replace(
      "labels: {app: web}",
      `labels: {app: web}\n      annotations: {${InjectAnnotations.inject}: "false"}`,
    )
    const result = inject(optOut)
    expect(result.text).toBe(optOut)
    expect(result.notes).toEqual([expect.stringMatching(/^Deployment shop\/web: injection skipped: .*opted out/)])
  })

  it("fails naming the document that is not valid YAML", () => {
    const result = injectWorkloads(`${workload("apps/v1", "Deployment")}---\nkind: [Deployment\n`, inputs)
    expect(Either.isLeft(result) && result.left.documentIndex).toBe(1)
    expect(Either.isLeft(result) && result.left.message).toMatch(/^YAML syntax error/)
  })

  it("fails naming the document, workload and item whose pod the injector refuses", () => {
    const refused = workload("apps/v1", "Deployment").replace(
      "labels: {app: web}",
      `labels: {app: web}\n      annotations: {${InjectAnnotations.proxyCPU}: lots}`,
    )
    const list = `apiVersion: v1\nkind: List\nitems:\n- ${refused.replaceAll("\n", "\n  ").trimEnd()}\n`
    const result = injectWorkloads(`apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\n${list}`, inputs)
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(result.left.documentIndex).toBe(1)
      expect(result.left.message).toMatch(/^items\[0\]: Deployment shop\/web: .*lots/)
    }
  })
})
