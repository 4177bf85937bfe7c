/**
 * The Ingress status writer against the in-process orchestrator API server (Ingress and
 * IngressClass served as networking.k8s.io/v1 resources with a status subresource), with the real
 * orchestrator config store: an Ingress of the mesh's IngressClass gets the ingress gateway
 * Service's load-balancer addresses, follows a change of them, and one of another class is left
 * alone.
 */
import { Effect, Fiber, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeOrchestratorConfigStore } from "../../../src/layers/config-store/orchestrator-store.js"
import { runIngressStatus } from "../../../src/layers/ingress/status-writer.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { ConfigStore } from "../../../src/services/config-store/config-store.js"
import { layerMemory as meshMemory } from "../../../src/services/mesh-config/watcher.js"
import { type Orchestrator, startOrchestrator } from "../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../support/orchestrator/layers.js"

const API = "networking.k8s.io/v1"

let server: Orchestrator
beforeAll(async () => {
  server = await startOrchestrator({
    namespaces: ["default", "mesh-system", "demo"],
    customResources: [
      { group: "networking.k8s.io", versions: ["v1"], kind: "Ingress", plural: "ingresses" },
      {
        group: "networking.k8s.io",
        versions: ["v1"],
        kind: "IngressClass",
        plural: "ingressclasses",
        namespaced: false,
      },
    ],
  })
})
afterAll(() => server.close())

const realSleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))
const eventually = (check: () => boolean, within = 8000) =>
  Effect.gen(function* () {
    const deadline = Date.now() + within
    while (!check()) {
      if (Date.now() > deadline) return yield* Effect.die(new Error("condition not met in time"))
      yield* realSleep(20)
    }
  })

const lbOf = (name: string) =>
  (server.get(API, "Ingress", "demo", name) as { status?: { loadBalancer?: { ingress?: unknown } } } | undefined)
    ?.status?.loadBalancer?.ingress

const ingress = (name: string, className: string) => ({
  apiVersion: API,
  kind: "Ingress",
  metadata: { name, namespace: "demo" },
  spec: {
    ingressClassName: className,
    rules: [
      {
        host: `${name}.example.com`,
        http: {
          paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } }],
        },
      },
    ],
  },
})

const gatewayService = (ingress: ReadonlyArray<Record<string, string>>) => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "mesh-ingressgateway", namespace: "mesh-system" },
  spec: { type: "LoadBalancer", ports: [{ name: "http2", port: 80 }] },
  status: { loadBalancer: { ingress } },
})

describe("Ingress status writer", () => {
  it("writes the ingress gateway's addresses on the Ingresses the mesh serves, and follows them", async () => {
    server.put({
      apiVersion: API,
      kind: "IngressClass",
      metadata: { name: "mesh" },
      spec: { controller: "mesh.io/ingress-controller" },
    })
    server.put({
      apiVersion: API,
      kind: "IngressClass",
      metadata: { name: "other" },
      spec: { controller: "example.com/other" },
    })
    server.put(ingress("ours", "mesh"))
    server.put(ingress("theirs", "other"))
    server.put(gatewayService([{ ip: "203.0.113.7" }, { hostname: "lb.example.com" }]))
    await Effect.runPromise(
      Effect.gen(function* () {
        const { store, watched } = yield* makeOrchestratorConfigStore()
        const fiber = yield* Effect.fork(
          runIngressStatus({
            systemNamespace: "mesh-system",
            domainSuffix: "cluster.local",
            interval: "150 millis",
            debounce: "10 millis",
            watched,
          }).pipe(Effect.provideService(ConfigStore, store)),
        )
        yield* eventually(() => lbOf("ours") !== undefined)
        // Sorted by hostname then IP (services/ingress/status.ts): an IP entry has no hostname.
        expect(lbOf("ours")).toEqual([{ ip: "203.0.113.7" }, { hostname: "lb.example.com" }])
        server.put(gatewayService([{ ip: "203.0.113.8" }]))
        yield* eventually(() => JSON.stringify(lbOf("ours")) === JSON.stringify([{ ip: "203.0.113.8" }]))
        // Several rounds later, still nothing on the other class's Ingress.
        yield* realSleep(400)
        expect(lbOf("theirs")).toBeUndefined()
        yield* Fiber.interrupt(fiber)
      }).pipe(
        Effect.scoped,
        Effect.provide(Layer.mergeAll(orchestratorLayer(server), metricsLayer("test"), meshMemory())),
      ),
    )
  }, 30_000)
})
