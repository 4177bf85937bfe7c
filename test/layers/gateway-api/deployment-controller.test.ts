/**
 * The gateway deployment controller with the status writer, against the in-process orchestrator
 * API server and the real orchestrator config store: a Gateway of the default `mesh` class and a
 * waypoint get their ServiceAccount, Deployment and Service (server-side applied as
 * `mesh-discovery`, owned by their Gateway); both are Programmed=False/Pending until the test
 * makes the Deployments ready and gives the LoadBalancer an ingress address, then
 * Programmed=True with the Services' addresses; a Gateway naming a Hostname address gets nothing; a deleted Service comes back.
 * The fake API server has no garbage collector: deletion with the Gateway is the owner
 * references' job, checked here.
 */
import { Effect, Fiber, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeOrchestratorConfigStore } from "../../../src/layers/config-store/orchestrator-store.js"
import { runGatewayDeployments } from "../../../src/layers/gateway-api/deployment-controller.js"
import { runGatewayApiStatus } from "../../../src/layers/gateway-api/status-writer.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { GATEWAY_API_GROUP } from "../../../src/services/config-model/kinds.js"
import { ConfigStore } from "../../../src/services/config-store/config-store.js"
import { defaultInjectorSettings } from "../../../src/services/injection/injector-settings.js"
import { layerMock } from "../../../src/services/registry/mock.js"
import { type KubeObject, type Orchestrator, startOrchestrator } from "../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../support/orchestrator/layers.js"
import { gatewayApiCustomResources } from "../../support/orchestrator/mesh-crds.js"

const CONTROLLER = "mesh.io/gateway-controller"
const API = `${GATEWAY_API_GROUP}/v1`

let server: Orchestrator
beforeAll(async () => {
  server = await startOrchestrator({ customResources: gatewayApiCustomResources() })
})
afterAll(() => server.close())

interface Condition {
  readonly type: string
  readonly status: string
  readonly reason: string
}
interface GatewayStatus {
  readonly conditions?: ReadonlyArray<Condition>
  readonly addresses?: ReadonlyArray<{ readonly type: string; readonly value: string }>
}
// biome-ignore lint/suspicious/noExplicitAny: stored objects are walked loosely in assertions
type Loose = any

const gatewayStatus = (name: string) =>
  (server.get(API, "Gateway", "default", name) as { status?: GatewayStatus } | undefined)?.status
const programmed = (name: string) => gatewayStatus(name)?.conditions?.find((c) => c.type === "Programmed")
const deploymentOf = (name: string) => server.get("apps/v1", "Deployment", "default", name) as Loose
const serviceOf = (name: string) => server.get("v1", "Service", "default", name) as Loose
const serviceAccountOf = (name: string) => server.get("v1", "ServiceAccount", "default", name) as Loose

const realSleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))
const eventually = (check: () => boolean, within = 4000) =>
  Effect.gen(function* () {
    const deadline = Date.now() + within
    while (!check()) {
      if (Date.now() > deadline) return yield* Effect.die(new Error("condition not met in time"))
      yield* realSleep(20)
    }
  })

/** What the orchestrator would do: a replica becomes ready. */
const markReady = (name: string) => {
  const d = deploymentOf(name) as KubeObject
  server.put({ ...d, status: { replicas: 1, readyReplicas: 1 } } as KubeObject)
}

describe("gateway deployment controller", () => {
  it("deploys Gateways of the mesh's classes and makes them Programmed once ready", async () => {
    server.put({
      apiVersion: API,
      kind: "Gateway",
      metadata: { name: "gw", namespace: "default", labels: { team: "edge" } },
      spec: { gatewayClassName: "mesh", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
    })
    server.put({
      apiVersion: API,
      kind: "Gateway",
      metadata: { name: "waypoint", namespace: "default" },
      spec: { gatewayClassName: "mesh-waypoint", listeners: [{ name: "mesh", port: 15008, protocol: "HBONE" }] },
    })
    // Its address names a proxy the user runs: left alone.
    server.put({
      apiVersion: API,
      kind: "Gateway",
      metadata: { name: "manual", namespace: "default" },
      spec: {
        gatewayClassName: "mesh",
        addresses: [{ type: "Hostname", value: "my-proxy.default.svc.cluster.local" }],
        listeners: [{ name: "http", port: 80, protocol: "HTTP" }],
      },
    })
    await Effect.runPromise(
      Effect.gen(function* () {
        const { store, watched } = yield* makeOrchestratorConfigStore()
        const settings = defaultInjectorSettings()
        const deployments = yield* Effect.fork(
          runGatewayDeployments({
            controllerName: CONTROLLER,
            watched,
            injection: () => ({ config: settings.config, values: settings.values, meshConfig: {}, revision: "" }),
            writeStatus: true,
            interval: "150 millis",
            debounce: "20 millis",
          }),
        )
        const status = yield* Effect.fork(
          runGatewayApiStatus({
            controllerName: CONTROLLER,
            interval: "150 millis",
            debounce: "20 millis",
            watched,
            deployedGateways: true,
          }).pipe(Effect.provideService(ConfigStore, store)),
        )

        yield* eventually(
          () =>
            deploymentOf("gw-mesh") !== undefined &&
            serviceOf("gw-mesh") !== undefined &&
            serviceAccountOf("gw-mesh") !== undefined &&
            deploymentOf("waypoint") !== undefined &&
            serviceOf("waypoint") !== undefined,
        )
        const gatewayUid = server.get(API, "Gateway", "default", "gw")?.metadata.uid
        for (const o of [deploymentOf("gw-mesh"), serviceOf("gw-mesh"), serviceAccountOf("gw-mesh")])
          expect(o.metadata.ownerReferences).toEqual([
            expect.objectContaining({ kind: "Gateway", name: "gw", uid: gatewayUid }),
          ])
        expect(serviceOf("gw-mesh").spec.type).toBe("LoadBalancer")
        expect(serviceOf("gw-mesh").spec.ports.map((p: Loose) => p.port)).toEqual([15021, 80])
        expect(serviceOf("waypoint").spec.type).toBe("ClusterIP")
        expect(serviceOf("waypoint").spec.ports.map((p: Loose) => p.port)).toEqual([15021, 15008])
        expect(deploymentOf("gw-mesh").metadata.labels).toMatchObject({
          team: "edge",
          "gateway.networking.k8s.io/gateway-name": "gw",
        })
        expect(deploymentOf("gw-mesh").spec.template.spec.containers[0].image).toBe("docker.io/mesh/proxyv2:latest")
        expect(deploymentOf("manual-mesh")).toBeUndefined()
        expect(serviceOf("manual-mesh")).toBeUndefined()
        // Applied server-side by our field manager.
        const applies = (object: string) =>
          server
            .requests()
            .filter(
              (r) => r.verb === "patch" && r.path.endsWith(object) && r.query.includes("fieldManager=mesh-discovery"),
            ).length
        expect(applies("/deployments/gw-mesh")).toBeGreaterThan(0)

        // Until ready: Pending.
        yield* eventually(() => programmed("gw")?.reason === "Pending" && programmed("waypoint")?.reason === "Pending")
        expect(programmed("gw")?.status).toBe("False")
        expect(gatewayStatus("gw")?.conditions?.find((c) => c.type === "Accepted")?.status).toBe("True")

        // The orchestrator's side: replicas ready, the load balancer's address.
        markReady("gw-mesh")
        markReady("waypoint")
        const lb = serviceOf("gw-mesh") as KubeObject
        server.put({ ...lb, status: { loadBalancer: { ingress: [{ ip: "203.0.113.5" }] } } } as KubeObject)

        yield* eventually(() => programmed("gw")?.status === "True" && programmed("waypoint")?.status === "True")
        expect(gatewayStatus("gw")?.addresses).toEqual([{ type: "IPAddress", value: "203.0.113.5" }])
        // The fake API server allocates cluster IPs as a real one does.
        const clusterIp = serviceOf("waypoint").spec.clusterIP
        expect(clusterIp).toMatch(/^10\.96\./)
        expect(gatewayStatus("waypoint")?.addresses).toEqual([{ type: "IPAddress", value: clusterIp }])
        // Readiness kept across the controller's later applies.
        expect(deploymentOf("gw-mesh").status.readyReplicas).toBe(1)

        // Quiet rounds (several intervals) apply nothing again.
        const before = applies("/deployments/gw-mesh") + applies("/services/gw-mesh")
        yield* realSleep(500)
        expect(applies("/deployments/gw-mesh") + applies("/services/gw-mesh")).toBe(before)

        // A Service removed by someone comes back.
        server.remove("v1", "Service", "default", "gw-mesh")
        yield* eventually(() => serviceOf("gw-mesh") !== undefined)

        yield* Fiber.interrupt(deployments)
        yield* Fiber.interrupt(status)
      }).pipe(
        Effect.provide(Layer.mergeAll(orchestratorLayer(server), metricsLayer("test"), layerMock())),
        Effect.scoped,
      ),
    )
  }, 15_000)
})
