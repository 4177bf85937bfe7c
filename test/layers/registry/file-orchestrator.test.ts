/**
 * The file-mode orchestrator registry: orchestrator documents in the config store become the
 * services and endpoints the orchestrator registry makes of the same objects, and follow edits.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Schedule } from "effect"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { layerValue as localClusterValue } from "../../../src/layers/orchestrator/local-cluster.js"
import { layerRegistries } from "../../../src/layers/registry/registries.js"
import type { ConfigResource } from "../../../src/services/config-model/resource.js"
import { layerMemory as configMemory, MemoryConfigStore } from "../../../src/services/config-store/memory.js"
import { layerMemory as meshMemory } from "../../../src/services/mesh-config/watcher.js"
import { noCluster } from "../../../src/services/orchestrator/local-cluster.js"
import { ServiceRegistry } from "../../../src/services/registry/registry.js"

const orch = (kind: string, name: string, body: unknown, labels: Record<string, string> = {}): ConfigResource => ({
  group: kind === "EndpointSlice" ? "discovery.k8s.io" : "",
  version: "v1",
  kind,
  meta: { name, namespace: "demo", labels, annotations: {} },
  spec: body,
})

const service = orch("Service", "ratings", {
  spec: {
    clusterIP: "10.96.0.50",
    selector: { app: "ratings" },
    ports: [{ name: "http", port: 9080, targetPort: 8080 }],
  },
})
const slice = (addresses: ReadonlyArray<string>) =>
  orch(
    "EndpointSlice",
    "ratings-abc",
    {
      addressType: "IPv4",
      ports: [{ name: "http", port: 8080, protocol: "TCP" }],
      endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true } })),
    },
    { "kubernetes.io/service-name": "ratings" },
  )
const HOST = "ratings.demo.svc.cluster.local"

const deps = Layer.mergeAll(
  configMemory([service, slice(["10.1.0.5"])]),
  meshMemory(),
  localClusterValue(noCluster),
  metricsLayer("test"),
)

/** `read` once `done` holds (the registry publishes from its own fiber), within 5 s. */
const until = <A>(read: Effect.Effect<A>, done: (a: A) => boolean) =>
  read.pipe(
    Effect.filterOrFail(done, () => "not yet"),
    Effect.retry(Schedule.spaced("10 millis")),
    Effect.timeout(Duration.seconds(5)),
  )

describe("orchestrator documents without a cluster (file mode)", () => {
  it.scopedLive("serve the Service's host with the EndpointSlice's endpoints, and follow edits", () =>
    Effect.gen(function* () {
      const registry = yield* ServiceRegistry
      const memory = yield* MemoryConfigStore
      yield* registry.awaitSynced
      const ratings = (yield* registry.services).find((s) => s.hostname === HOST)
      expect(ratings?.addresses).toEqual(["10.96.0.50"])
      expect(ratings?.ports.map((p) => p.port)).toEqual([9080])
      const addresses = registry
        .endpoints(HOST, "demo", 9080)
        .pipe(Effect.map((es) => es.map((e) => `${e.address}:${e.port}`)))
      expect(yield* addresses).toEqual(["10.1.0.5:8080"])

      yield* memory.upsert(slice(["10.1.0.6", "10.1.0.7"]))
      const after = yield* until(addresses, (a) => a.length === 2)
      expect([...after].sort()).toEqual(["10.1.0.6:8080", "10.1.0.7:8080"])

      yield* memory.remove("Service", "demo", "ratings")
      const gone = yield* until(registry.services, (s) => !s.some((x) => x.hostname === HOST))
      expect(gone.some((s) => s.hostname === HOST)).toBe(false)
    }).pipe(Effect.provide(layerRegistries({ registries: ["Mock"] }).pipe(Layer.provideMerge(deps)))),
  )
})
