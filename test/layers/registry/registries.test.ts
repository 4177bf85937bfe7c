import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Layer, Queue } from "effect"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { layerValue as localClusterValue } from "../../../src/layers/orchestrator/local-cluster.js"
import { layerRegistries } from "../../../src/layers/registry/registries.js"
import { layerServiceEntry } from "../../../src/layers/registry/service-entry.js"
import { layer as discoveryInputsLayer } from "../../../src/programs/mesh-discovery/discovery-inputs.js"
import { RegistryInputsConfig } from "../../../src/services/config/discovery-config.js"
import type { ConfigResource } from "../../../src/services/config-model/resource.js"
import { ConfigStore } from "../../../src/services/config-store/config-store.js"
import { layerMemory as configMemory, MemoryConfigStore } from "../../../src/services/config-store/memory.js"
import { defaultMeshConfig } from "../../../src/services/mesh-config/mesh-config.js"
import { MeshWatcher, MeshWatcherWriter, layerMemory as meshMemory } from "../../../src/services/mesh-config/watcher.js"
import { noCluster } from "../../../src/services/orchestrator/local-cluster.js"
import { MockRegistry, mockService } from "../../../src/services/registry/mock.js"
import { ServiceRegistry } from "../../../src/services/registry/registry.js"

const resource = (kind: string, name: string, spec: unknown, labels: Record<string, string> = {}): ConfigResource => ({
  group: "networking.mesh.io",
  version: "v1",
  kind,
  meta: { name, namespace: "default", labels, annotations: {} },
  spec,
})

const se = (name: string, host: string, extra: Record<string, unknown> = {}) =>
  resource("ServiceEntry", name, {
    hosts: [host],
    location: "MESH_INTERNAL",
    resolution: "STATIC",
    ports: [{ number: 80, name: "http", protocol: "HTTP" }],
    ...extra,
  })

const within = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.timeout(self, Duration.seconds(10))

describe("ServiceEntry registry layer", () => {
  const base = Layer.merge(
    configMemory([se("a", "a.example.com", { endpoints: [{ address: "10.0.0.1" }] })]),
    meshMemory(),
  )
  const layer = Layer.merge(base, layerServiceEntry({ clusterId: "c1" }).pipe(Layer.provide(base)))

  it.scoped("converts the store's ServiceEntries and follows their changes", () =>
    Effect.gen(function* () {
      const registry = yield* ServiceRegistry
      const memory = yield* MemoryConfigStore
      yield* registry.awaitSynced
      expect((yield* registry.services).map((s) => s.hostname)).toEqual(["a.example.com"])
      expect((yield* registry.endpoints("a.example.com", "default", 80)).map((e) => e.address)).toEqual(["10.0.0.1"])
      const address = (yield* registry.services)[0]?.addresses[0]
      expect(address).toMatch(/^240\.240\./)

      const { events } = yield* registry.subscribe
      yield* memory.upsert(se("b", "b.example.com", { workloadSelector: { labels: { app: "b" } } }))
      const added = yield* within(Queue.take(events))
      expect(added.servicesAdded).toEqual(["default/b.example.com"])
      expect(added.servicesUpdated).toEqual([])

      yield* memory.upsert(
        resource("WorkloadEntry", "vm1", { address: "10.1.0.1", labels: { app: "b" }, serviceAccount: "vm" }),
      )
      const selected = yield* within(Queue.take(events))
      expect(selected.endpointsChanged).toEqual(["default/b.example.com"])
      expect(selected.snapshot.endpoints("b.example.com", "default")[0]?.serviceAccount).toBe(
        "spiffe://cluster.local/ns/default/sa/vm",
      )
      // Other kinds do not touch the registry; the existing address is stable.
      yield* memory.upsert(resource("Gateway", "g", {}))
      yield* memory.remove("ServiceEntry", "default", "b")
      const removed = yield* within(Queue.take(events))
      expect(removed.servicesRemoved).toEqual(["default/b.example.com"])
      expect((yield* registry.services)[0]?.addresses[0]).toBe(address)
    }).pipe(Effect.provide(layer)),
  )

  it.scoped("a new trust domain re-derives endpoint identities", () =>
    Effect.gen(function* () {
      const registry = yield* ServiceRegistry
      const memory = yield* MemoryConfigStore
      const mesh = yield* MeshWatcherWriter
      const { events } = yield* registry.subscribe
      yield* memory.upsert(se("c", "c.example.com", { endpoints: [{ address: "10.0.0.3", serviceAccount: "sa" }] }))
      const added = yield* within(Queue.take(events))
      expect(added.snapshot.endpoints("c.example.com", "default")[0]?.serviceAccount).toBe(
        "spiffe://cluster.local/ns/default/sa/sa",
      )
      yield* mesh.setConfig({ ...defaultMeshConfig(), trustDomain: "example.org" })
      const event = yield* within(Queue.take(events))
      expect(event.snapshot.endpoints("c.example.com", "default")[0]?.serviceAccount).toBe(
        "spiffe://example.org/ns/default/sa/sa",
      )
    }).pipe(Effect.provide(layer)),
  )
})

describe("layerRegistries", () => {
  // No LocalCluster: the orchestrator registry itself is tested in orchestrator.test.ts.
  const deps = Layer.mergeAll(
    configMemory([se("a", "a.example.com", { endpoints: [{ address: "10.0.0.1" }] })]),
    meshMemory(),
    localClusterValue(noCluster),
    metricsLayer("test"),
  )

  it.scoped("Mock + ServiceEntry aggregate; the Mock registry can be filled", () =>
    Effect.gen(function* () {
      const registry = yield* ServiceRegistry
      const mock = yield* MockRegistry
      const { events } = yield* registry.subscribe
      yield* mock.addService(mockService("m.ns.svc.cluster.local", "ns"))
      const event = yield* within(Queue.take(events))
      expect(event.registry).toBe("Aggregate")
      expect((yield* registry.services).map((s) => `${s.registry}:${s.hostname}`)).toEqual([
        "ServiceEntry:a.example.com",
        "Mock:m.ns.svc.cluster.local",
      ])
    }).pipe(Effect.provide(layerRegistries({ registries: ["Mock"] }).pipe(Layer.provide(deps)))),
  )

  it.scoped("without Mock, the Mock registry is not part of the aggregate", () =>
    Effect.gen(function* () {
      const mock = yield* MockRegistry
      yield* mock.addService(mockService("m.ns.svc", "ns"))
      expect((yield* (yield* ServiceRegistry).services).map((s) => s.hostname)).toEqual(["a.example.com"])
    }).pipe(
      Effect.provide(
        layerRegistries({ registries: ["Orchestrator"], orchconfig: "/some/orchconfig" }).pipe(Layer.provide(deps)),
      ),
    ),
  )

  it.effect("Orchestrator with neither --orchconfig nor an in-cluster environment fails clearly", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(
        Effect.scoped(Layer.build(layerRegistries({ registries: ["Orchestrator", "Mock"] }).pipe(Layer.provide(deps)))),
      )
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) expect(String(exit.cause)).toContain("orchestrator registry is not configured")
      const inCluster = yield* Effect.exit(
        Effect.scoped(
          Layer.build(
            layerRegistries({ registries: ["Orchestrator"], orchestratorServiceHost: "10.0.0.1" }).pipe(
              Layer.provide(deps),
            ),
          ),
        ),
      )
      expect(Exit.isSuccess(inCluster)).toBe(true)
    }),
  )
})

describe("discoveryInputsLayer", () => {
  const env = RegistryInputsConfig.layer({ CLUSTER_ID: "c1", PILOT_ENABLE_IP_AUTOALLOCATE: true })

  it.scopedLive("wires --configDir, --meshConfig and --registries Mock together", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "mesh-inputs-"))),
        (d) => Effect.sync(() => fs.rmSync(d, { recursive: true, force: true })),
      )
      fs.mkdirSync(path.join(dir, "config"))
      fs.writeFileSync(
        path.join(dir, "config", "se.yaml"),
        "apiVersion: networking.mesh.io/v1\nkind: ServiceEntry\nmetadata: {name: ext, namespace: ns}\nspec:\n  hosts: [ext.example.com]\n  resolution: DNS\n  ports: [{number: 443, name: tls, protocol: TLS}]\n",
      )
      fs.writeFileSync(path.join(dir, "mesh"), "trustDomain: inputs.org\n")
      const layer = discoveryInputsLayer({
        configDir: path.join(dir, "config"),
        meshConfig: path.join(dir, "mesh"),
        networksConfig: path.join(dir, "meshNetworks"),
        registries: ["Mock"],
        orchconfig: "",
      }).pipe(Layer.provide(metricsLayer("test")), Layer.provide(env))
      const result = yield* Effect.gen(function* () {
        const store = yield* ConfigStore
        const mesh = yield* MeshWatcher
        const registry = yield* ServiceRegistry
        return {
          resources: (yield* store.snapshot).size,
          trustDomain: (yield* mesh.config).trustDomain,
          hosts: (yield* registry.services).map((s) => s.hostname),
          endpoints: (yield* registry.endpoints("ext.example.com", "ns", 443)).map((e) => `${e.address}:${e.port}`),
        }
      }).pipe(Effect.provide(layer))
      expect(result).toEqual({
        resources: 1,
        trustDomain: "inputs.org",
        hosts: ["ext.example.com"],
        endpoints: ["ext.example.com:443"],
      })
    }),
  )

  it.effect("default --registries Orchestrator without an orchestrator fails before reading anything", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(
        Effect.scoped(
          Layer.build(
            discoveryInputsLayer({
              configDir: "/nonexistent",
              meshConfig: "/nonexistent/mesh",
              networksConfig: "",
              registries: ["Orchestrator"],
              orchconfig: "",
            }).pipe(Layer.provide(metricsLayer("test")), Layer.provide(env)),
          ),
        ),
      )
      expect(Exit.isFailure(exit) && String(exit.cause)).toContain("orchestrator registry is not configured")
    }),
  )
})
