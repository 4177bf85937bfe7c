import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Layer, Schedule } from "effect"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import {
  makeOrchestratorRegistry,
  type OrchestratorRegistryOptions,
} from "../../../src/layers/registry/orchestrator.js"
import { layerMemory as configMemory } from "../../../src/services/config-store/memory.js"
import { layerMemory as meshMemory } from "../../../src/services/mesh-config/watcher.js"
import { Metrics } from "../../../src/services/metrics/metrics.js"
import { OrchestratorClient, OrchestratorError } from "../../../src/services/orchestrator/client.js"
import type { RegistrySnapshot, ServiceRegistryShape } from "../../../src/services/registry/registry.js"
import { type Orchestrator, startOrchestrator } from "../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../support/orchestrator/layers.js"

const HOST = "reviews.default.svc.cluster.local"

const server = Effect.acquireRelease(
  Effect.promise(() => startOrchestrator({ tls: false, namespaces: ["default", "prod", "mesh-system"] })),
  (s) => Effect.promise(() => s.close()),
)

const options: OrchestratorRegistryOptions = {
  clusterId: "c1",
  domain: "cluster.local",
  drainingLabel: "mesh.io/draining",
  sendUnhealthyEndpoints: false,
  selectWorkloadEntries: true,
  watchNamespace: "",
}

/** Orchestrator client + informers, config store, mesh watcher and metrics, built into the test's scope. */
const environment = (
  s: Orchestrator,
  client?: (c: Context.Tag.Service<OrchestratorClient>) => Context.Tag.Service<OrchestratorClient>,
) =>
  Effect.gen(function* () {
    const context = yield* Layer.build(
      Layer.mergeAll(orchestratorLayer(s), configMemory([]), meshMemory(), metricsLayer("test")),
    )
    if (client === undefined) return context
    return Context.add(context, OrchestratorClient, client(Context.get(context, OrchestratorClient)))
  })

const until = (registry: ServiceRegistryShape, predicate: (s: RegistrySnapshot) => boolean) =>
  registry.snapshot.pipe(
    Effect.repeat({ until: predicate, schedule: Schedule.spaced("20 millis") }),
    Effect.timeout(Duration.seconds(15)),
  )

const gauge = (name: string) =>
  Effect.flatMap(Metrics, (m) =>
    Effect.promise(async () => (await m.registry.getSingleMetric(name)?.get())?.values[0]?.value),
  )

const putService = (s: Orchestrator, name: string, namespace = "default") =>
  s.put({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace, labels: { app: name } },
    spec: {
      type: "ClusterIP",
      clusterIP: "10.96.0.20",
      clusterIPs: ["10.96.0.20"],
      selector: { app: name },
      ports: [{ name: "http", port: 9080, targetPort: 8080, protocol: "TCP" }],
    },
  })

const putNode = (s: Orchestrator) =>
  s.put({
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: "node-1",
      labels: {
        "topology.kubernetes.io/region": "us-east",
        "topology.kubernetes.io/zone": "us-east-1a",
        "topology.mesh.io/subzone": "rack-1",
      },
    },
  })

const putPod = (s: Orchestrator, name: string, ip: string, labels: Record<string, string> = {}) =>
  s.put({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default", labels: { app: "reviews", version: "v1", ...labels } },
    spec: { nodeName: "node-1", serviceAccountName: "bookinfo-reviews", containers: [{ name: "app", image: "x" }] },
    status: { phase: "Running", podIP: ip, podIPs: [{ ip }], conditions: [{ type: "Ready", status: "True" }] },
  })

const putSlice = (s: Orchestrator, endpoints: ReadonlyArray<{ ip: string; pod: string; ready: boolean }>) =>
  s.put({
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name: "reviews-abcde", namespace: "default", labels: { "kubernetes.io/service-name": "reviews" } },
    addressType: "IPv4",
    endpoints: endpoints.map((e) => ({
      addresses: [e.ip],
      conditions: { ready: e.ready, serving: e.ready, terminating: false },
      nodeName: "node-1",
      targetRef: { kind: "Pod", namespace: "default", name: e.pod },
    })),
    ports: [{ name: "http", port: 8080, protocol: "TCP" }],
  })

describe("orchestrator registry layer", () => {
  it.scopedLive("Service + EndpointSlice + Pod + Node → service and endpoints; readiness, draining, deletion", () =>
    Effect.gen(function* () {
      const s = yield* server
      putNode(s)
      putPod(s, "reviews-1", "10.1.0.1")
      putService(s, "reviews")
      putSlice(s, [{ ip: "10.1.0.1", pod: "reviews-1", ready: true }])
      putService(s, "other", "prod")
      const context = yield* environment(s)
      const registry = yield* makeOrchestratorRegistry(options).pipe(Effect.provide(context))
      const scoped = yield* makeOrchestratorRegistry({
        ...options,
        watchNamespace: "default",
        sendUnhealthyEndpoints: true,
      }).pipe(Effect.provide(context))
      yield* registry.awaitSynced.pipe(Effect.timeout(Duration.seconds(15)))
      const first = yield* registry.snapshot
      expect(first.services.map((x) => x.hostname)).toEqual(["other.prod.svc.cluster.local", HOST])
      const service = first.service(HOST, "default")
      expect(service).toMatchObject({
        addresses: ["10.96.0.20"],
        ports: [{ name: "http", port: 9080, protocol: "HTTP", targetPort: 8080 }],
        registry: "Orchestrator",
        clusterId: "c1",
      })
      expect(first.endpoints(HOST, "default", 9080)).toEqual([
        expect.objectContaining({
          address: "10.1.0.1",
          port: 8080,
          servicePortName: "http",
          locality: "us-east/us-east-1a/rack-1",
          serviceAccount: "spiffe://cluster.local/ns/default/sa/bookinfo-reviews",
          labels: expect.objectContaining({ app: "reviews", version: "v1" }),
          healthStatus: "HEALTHY",
        }),
      ])
      // MESH_WATCH_NAMESPACE: only that namespace's services.
      yield* scoped.awaitSynced.pipe(Effect.timeout(Duration.seconds(15)))
      expect((yield* scoped.services).map((x) => x.hostname)).toEqual([HOST])

      // A second pod arrives not ready: left out (counted), or UNHEALTHY with the flag.
      putPod(s, "reviews-2", "10.1.0.2")
      putSlice(s, [
        { ip: "10.1.0.1", pod: "reviews-1", ready: true },
        { ip: "10.1.0.2", pod: "reviews-2", ready: false },
      ])
      yield* until(scoped, (x) => x.endpoints(HOST, "default").length === 2)
      expect((yield* scoped.endpoints(HOST, "default")).map((e) => [e.address, e.healthStatus])).toEqual([
        ["10.1.0.1", "HEALTHY"],
        ["10.1.0.2", "UNHEALTHY"],
      ])
      expect((yield* registry.endpoints(HOST, "default")).map((e) => e.address)).toEqual(["10.1.0.1"])
      expect(yield* gauge("pilot_endpoint_not_ready").pipe(Effect.provide(context))).toBe(1)

      // The first pod becomes not ready: gone.
      putSlice(s, [
        { ip: "10.1.0.1", pod: "reviews-1", ready: false },
        { ip: "10.1.0.2", pod: "reviews-2", ready: true },
      ])
      yield* until(
        registry,
        (x) =>
          x
            .endpoints(HOST, "default")
            .map((e) => e.address)
            .join() === "10.1.0.2",
      )

      // The draining label makes it DRAINING.
      putPod(s, "reviews-2", "10.1.0.2", { "mesh.io/draining": "true" })
      yield* until(registry, (x) => x.endpoints(HOST, "default")[0]?.healthStatus === "DRAINING")

      // A slice naming a pod the registry does not know: left out and counted.
      putSlice(s, [
        { ip: "10.1.0.2", pod: "reviews-2", ready: true },
        { ip: "10.1.0.9", pod: "reviews-9", ready: true },
      ])
      const noPod = gauge("endpoint_no_pod").pipe(Effect.provide(context))
      // Both registries of this test see it, and each adds its share to the one gauge.
      yield* noPod.pipe(
        Effect.repeat({ until: (v) => v === 2, schedule: Schedule.spaced("20 millis") }),
        Effect.timeout(Duration.seconds(15)),
      )
      expect((yield* registry.endpoints(HOST, "default")).map((e) => e.address)).toEqual(["10.1.0.2"])
      // The pod arrives: its endpoint joins.
      putPod(s, "reviews-9", "10.1.0.9")
      yield* until(registry, (x) => x.endpoints(HOST, "default").length === 2)
      yield* noPod.pipe(
        Effect.repeat({ until: (v) => v === 0, schedule: Schedule.spaced("20 millis") }),
        Effect.timeout(Duration.seconds(15)),
      )

      // Deleted: gone.
      s.remove("v1", "Service", "default", "reviews")
      yield* until(
        registry,
        (x) => x.service(HOST, "default") === undefined && x.endpoints(HOST, "default").length === 0,
      )
    }),
  )

  it.scopedLive("reads core Endpoints when EndpointSlices are not served", () =>
    Effect.gen(function* () {
      const s = yield* server
      putNode(s)
      putPod(s, "reviews-1", "10.1.0.1")
      putService(s, "reviews")
      s.put({
        apiVersion: "v1",
        kind: "Endpoints",
        metadata: { name: "reviews", namespace: "default" },
        subsets: [
          {
            addresses: [
              {
                ip: "10.1.0.1",
                nodeName: "node-1",
                targetRef: { kind: "Pod", namespace: "default", name: "reviews-1" },
              },
            ],
            ports: [{ name: "http", port: 8080, protocol: "TCP" }],
          },
        ],
      })
      // The API server answers 404 for discovery.k8s.io/v1, as one without EndpointSlices does.
      const context = yield* environment(s, (client) => ({
        ...client,
        list: (ref, listOptions) =>
          ref.plural === "endpointslices"
            ? Effect.fail(
                new OrchestratorError({
                  status: 404,
                  reason: "NotFound",
                  message: "the server could not find the requested resource",
                }),
              )
            : client.list(ref, listOptions),
      }))
      const registry = yield* makeOrchestratorRegistry(options).pipe(Effect.provide(context))
      yield* registry.awaitSynced.pipe(Effect.timeout(Duration.seconds(15)))
      expect((yield* registry.endpoints(HOST, "default", 9080)).map((e) => [e.address, e.port, e.locality])).toEqual([
        ["10.1.0.1", 8080, "us-east/us-east-1a/rack-1"],
      ])
      expect(s.requestCount({ path: /endpointslices/ })).toBe(0)
    }),
  )
})
