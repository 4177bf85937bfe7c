/**
 * Issue 36 group 2 on the orchestrator: the built `mesh-discovery` on the in-process orchestrator
 * (Gateway-API CRDs and the InferencePool CRD installed, ENABLE_GATEWAY_API_INFERENCE_EXTENSION
 * on), no `--configDir`.
 * - The pool is watched; the leader applies its shadow Service `<pool>-ip-<hash>` (headless, one
 *   port 54321+i per target port, the picker's labels) owned by the pool, and applies it again
 *   when the pool's target ports change.
 * - A route to the pool is served to a stand-in router: to the shadow Service's cluster.
 * - The pool gets its status per Gateway (Accepted, ResolvedRefs).
 * - A Service of the shadow's name that lacks the pool label is left alone.
 */
import { createHash } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startOrchestratorDiscovery } from "../support/discovery.js"
import { type Orchestrator, startOrchestrator } from "../support/orchestrator/index.js"
import { gatewayApiCustomResources, meshCustomResources } from "../support/orchestrator/mesh-crds.js"
import type { Daemon } from "../support/processes.js"
import { startInferenceRouter } from "../support/proxygen/inference-router.js"
import { StandInType } from "../support/proxygen/stand-in-proxy.js"

const NS = "demo"
const POOL_API = "inference.networking.k8s.io/v1"
const shadowName = (pool: string) => `${pool}-ip-${createHash("sha256").update(pool).digest("hex").slice(0, 8)}`
const SHADOW = shadowName("llama")
const SHADOW_CLUSTER = `outbound|54321||${SHADOW}.${NS}.svc.cluster.local`

let server: Orchestrator
let discovery: Daemon
let ads = ""

interface ServiceObject {
  readonly metadata: {
    readonly labels?: Record<string, string>
    readonly ownerReferences?: ReadonlyArray<Record<string, unknown>>
  }
  readonly spec: {
    readonly clusterIP?: string
    readonly selector?: Record<string, string>
    readonly ports?: ReadonlyArray<{ name: string; port: number; targetPort: number }>
  }
}
type Condition = { type: string; status: string; reason: string }
interface PoolStatus {
  readonly parents?: ReadonlyArray<{ parentRef: { name: string }; conditions: ReadonlyArray<Condition> }>
}

const until = async <T>(what: string, read: () => T | Promise<T>, check: (t: T) => boolean, ms = 60_000) => {
  const deadline = Date.now() + ms
  let last: T | undefined
  while (Date.now() < deadline) {
    last = await read()
    if (check(last)) return last
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last)}\n${discovery.output().slice(-3000)}`)
}

const serviceOf = (name: string) => server.get("v1", "Service", NS, name) as ServiceObject | undefined

const pool = (name: string, targetPorts: ReadonlyArray<number>) =>
  server.put({
    apiVersion: POOL_API,
    kind: "InferencePool",
    metadata: { name, namespace: NS },
    spec: {
      selector: { matchLabels: { app: `vllm-${name}` } },
      targetPorts: targetPorts.map((number) => ({ number })),
      endpointPickerRef: { name: `${name}-epp`, port: { number: 9002 } },
    },
  })

beforeAll(async () => {
  server = await startOrchestrator({
    customResources: [
      ...meshCustomResources(),
      ...gatewayApiCustomResources(),
      {
        group: "inference.networking.k8s.io",
        versions: ["v1"],
        kind: "InferencePool",
        plural: "inferencepools",
        namespaced: true,
      },
    ],
  })
  for (const name of ["mesh-system", NS]) server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name } })
  server.put({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "llama-epp", namespace: NS },
    spec: { clusterIP: "10.96.0.30", selector: { app: "llama-epp" }, ports: [{ name: "grpc", port: 9002 }] },
  })
  server.put({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { name: "edge", namespace: NS },
    spec: { gatewayClassName: "mesh", listeners: [{ name: "http", port: 8080, protocol: "HTTP" }] },
  })
  pool("llama", [8000])
  // Someone else's Service under the shadow name of pool "taken": never overwritten.
  server.put({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: shadowName("taken"), namespace: NS, labels: { owner: "someone" } },
    spec: { clusterIP: "10.96.0.31", selector: { app: "other" }, ports: [{ name: "http", port: 80 }] },
  })
  pool("taken", [8000])
  server.put({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: { name: "chat", namespace: NS },
    spec: {
      parentRefs: [{ name: "edge" }],
      rules: [
        {
          matches: [{ path: { type: "PathPrefix", value: "/v1" } }],
          backendRefs: [{ group: "inference.networking.k8s.io", kind: "InferencePool", name: "llama" }],
        },
      ],
    },
  })
  ;({ daemon: discovery } = await startOrchestratorDiscovery(server.kubeconfig(), "meshd-inference", {}, 120_000, {
    ENABLE_GATEWAY_API_INFERENCE_EXTENSION: "true",
    PILOT_DEBOUNCE_AFTER: "10ms",
    PILOT_DEBOUNCE_MAX: "1s",
  }))
  ads = (await discovery.waitFor(/ADS server listening on ([\d.]+:\d+)/, 60_000))[1]!
}, 180_000)

afterAll(async () => {
  await discovery?.stop()
  await server?.close()
})

describe("InferencePools on the orchestrator, through the built mesh-discovery", () => {
  it("applies the pool's shadow Service, owned by the pool, and updates it when the pool changes", async () => {
    const uid = (server.get(POOL_API, "InferencePool", NS, "llama") as { metadata: { uid?: string } }).metadata.uid
    expect(uid).toBeTruthy()
    const shadow = await until(
      "the shadow Service",
      () => serviceOf(SHADOW),
      (s) => s !== undefined,
    )
    expect(shadow?.metadata.labels).toMatchObject({
      "mesh.io/inferencepool-name": "llama",
      "mesh.io/inferencepool-extension-service": "llama-epp",
      "mesh.io/inferencepool-extension-port": "9002",
      "mesh.io/inferencepool-extension-failure-mode": "FailClose",
    })
    expect(shadow?.metadata.ownerReferences).toEqual([
      { apiVersion: POOL_API, kind: "InferencePool", name: "llama", uid },
    ])
    expect(shadow?.spec.clusterIP).toBe("None")
    expect(shadow?.spec.selector).toEqual({ app: "vllm-llama" })
    expect(shadow?.spec.ports?.map((p) => [p.name, p.port, p.targetPort])).toEqual([["http-0", 54321, 8000]])

    pool("llama", [8000, 8001])
    const updated = await until(
      "the shadow Service's second port",
      () => serviceOf(SHADOW),
      (s) => (s?.spec.ports?.length ?? 0) === 2,
    )
    expect(updated?.spec.ports?.map((p) => [p.name, p.port, p.targetPort])).toEqual([
      ["http-0", 54321, 8000],
      ["http-1", 54322, 8001],
    ])
  })

  it("serves a stand-in router the route to the shadow Service", async () => {
    const { proxy, request } = startInferenceRouter(ads)
    try {
      await proxy
        .waitFor((p) => p.version(StandInType.route) !== "" && request("/v1/chat").kind === "route", 60_000)
        .catch((e: unknown) => {
          throw new Error(`${String(e)}\n${discovery.output().slice(-3000)}`)
        })
      expect(proxy.nacks).toEqual([])
      expect(request("/v1/chat")).toMatchObject({ kind: "route", cluster: SHADOW_CLUSTER })
      expect(proxy.names(StandInType.cluster)).toContain(SHADOW_CLUSTER)
    } finally {
      proxy.close()
    }
  }, 90_000)

  it("writes the pool's status per Gateway", async () => {
    const status = await until(
      "the pool's status",
      () => (server.get(POOL_API, "InferencePool", NS, "llama") as { status?: PoolStatus } | undefined)?.status,
      (s) => (s?.parents?.length ?? 0) === 1,
    )
    expect(status?.parents?.[0]?.parentRef.name).toBe("edge")
    const conditions = status?.parents?.[0]?.conditions ?? []
    expect(conditions.find((c) => c.type === "Accepted")?.status).toBe("True")
    expect(conditions.find((c) => c.type === "ResolvedRefs")?.status).toBe("True")
  })

  it("leaves alone a Service of the shadow's name that is not a pool's", async () => {
    await until(
      "the warning about the foreign Service",
      () => discovery.output(),
      (o) => o.includes(`Service ${NS}/${shadowName("taken")} exists without`),
    )
    const foreign = serviceOf(shadowName("taken"))
    expect(foreign?.metadata.labels).toEqual({ owner: "someone" })
    expect(foreign?.metadata.ownerReferences).toBeUndefined()
    expect(foreign?.spec.ports?.map((p) => p.port)).toEqual([80])
  })
})
