/**
 * Server-side apply on the fake orchestrator through the real client-node: create when absent,
 * fields a manager stops applying disappear while other writers' fields stay, dryRun=All keeps
 * nothing, fieldManager is required; the new built-in kinds (Deployment with its status
 * subresource and generation) and a CRD applied this way becoming Established and served.
 */
import { ApiException, KubeConfig, KubernetesObjectApi, PatchStrategy } from "@kubernetes/client-node"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Orchestrator, startOrchestrator } from "./index.js"

let server: Orchestrator
let api: KubernetesObjectApi

beforeAll(async () => {
  server = await startOrchestrator()
  const kc = new KubeConfig()
  kc.loadFromFile(server.kubeconfig())
  api = KubernetesObjectApi.makeApiClient(kc)
})
afterAll(() => server.close())

const apply = (o: object, options: { dryRun?: boolean; manager?: string } = {}) =>
  api.patch(
    structuredClone(o) as never,
    undefined,
    options.dryRun === true ? "All" : undefined,
    options.manager ?? "tester",
    true,
    PatchStrategy.ServerSideApply,
  )

const deployment = (labels: Record<string, string>, replicas?: number) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "default", labels },
  spec: {
    ...(replicas === undefined ? {} : { replicas }),
    selector: { matchLabels: { app: "web" } },
    template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image: "web:1" }] } },
  },
})

describe("server-side apply", () => {
  it("creates, then drops what the manager no longer applies and keeps what others wrote", async () => {
    await apply(deployment({ a: "1", b: "2" }, 2))
    const created = server.get("apps/v1", "Deployment", "default", "web")!
    expect(created.metadata.generation).toBe(1)
    // Another writer adds a label; the status subresource is untouched by applies.
    server.put({
      ...created,
      metadata: { ...created.metadata, labels: { a: "1", b: "2", other: "x" } },
      status: { observedGeneration: 1 },
    })
    await apply(deployment({ a: "1" }))
    const updated = server.get("apps/v1", "Deployment", "default", "web")!
    expect(updated.metadata.labels).toEqual({ a: "1", other: "x" })
    expect((updated.spec as { replicas?: number }).replicas).toBeUndefined()
    expect(updated.metadata.generation).toBe(2)
    expect(updated.status).toEqual({ observedGeneration: 1 })
  })

  it("honours dryRun=All and requires a field manager", async () => {
    const configMap = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "dry", namespace: "default" },
      data: { k: "v" },
    }
    const answer = (await apply(configMap, { dryRun: true })) as { data?: Record<string, string> }
    expect(answer.data).toEqual({ k: "v" })
    expect(server.get("v1", "ConfigMap", "default", "dry")).toBeUndefined()
    const missing = await api
      .patch(structuredClone(configMap), undefined, undefined, undefined, true, PatchStrategy.ServerSideApply)
      .catch((e: unknown) => e)
    expect(missing).toBeInstanceOf(ApiException)
    expect((missing as ApiException<unknown>).code).toBe(400)
  })

  it("serves the kind of an applied CRD, which is Established", async () => {
    await apply({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "widgets.example.io" },
      spec: {
        group: "example.io",
        scope: "Namespaced",
        names: { kind: "Widget", plural: "widgets", singular: "widget", listKind: "WidgetList" },
        versions: [{ name: "v1", served: true, storage: true, schema: { openAPIV3Schema: { type: "object" } } }],
      },
    })
    const crd = server.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", undefined, "widgets.example.io")!
    const conditions = (crd.status as { conditions: Array<{ type: string; status: string }> }).conditions
    expect(conditions).toContainEqual(expect.objectContaining({ type: "Established", status: "True" }))
    await apply({
      apiVersion: "example.io/v1",
      kind: "Widget",
      metadata: { name: "w", namespace: "default" },
      spec: { size: 1 },
    })
    expect(server.get("example.io/v1", "Widget", "default", "w")?.spec).toEqual({ size: 1 })
  })

  it("serves the RBAC, autoscaling and policy kinds", async () => {
    await apply({ apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "r" }, rules: [] })
    await apply({
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: "p", namespace: "default" },
      spec: { minAvailable: 1 },
    })
    expect(server.list("rbac.authorization.k8s.io/v1", "ClusterRole").map((o) => o.metadata.name)).toEqual(["r"])
    expect(server.get("policy/v1", "PodDisruptionBudget", "default", "p")).toBeDefined()
  })
})
