import * as fs from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Logger, Schedule } from "effect"
import { stringify } from "yaml"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { type MulticlusterOptions, makeMulticlusterController } from "../../../src/layers/registry/multicluster.js"
import { makeOrchestratorRegistry } from "../../../src/layers/registry/orchestrator.js"
import { layerMemory as configMemory } from "../../../src/services/config-store/memory.js"
import { layerMemory as meshMemory } from "../../../src/services/mesh-config/watcher.js"
import { Metrics } from "../../../src/services/metrics/metrics.js"
import { makeAggregateRegistry } from "../../../src/services/registry/aggregate.js"
import type { RegistrySnapshot, ServiceRegistryShape } from "../../../src/services/registry/registry.js"
import { type Orchestrator, type OrchestratorOptions, startOrchestrator } from "../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../support/orchestrator/layers.js"

const NS = "mesh-system"
const HOST = "reviews.default.svc.cluster.local"

const orchestrator = (options: OrchestratorOptions) =>
  Effect.acquireRelease(
    Effect.promise(() => startOrchestrator(options)),
    (s) => Effect.promise(() => s.close()),
  )

const registryOptions = {
  domain: "cluster.local",
  drainingLabel: "mesh.io/draining",
  sendUnhealthyEndpoints: false,
  selectWorkloadEntries: false,
  watchNamespace: "",
  systemNamespace: NS,
}

const options = (overrides: Partial<MulticlusterOptions> = {}): MulticlusterOptions => ({
  clusterId: "local",
  namespace: NS,
  registry: registryOptions,
  qps: 0,
  burst: 0,
  insecureOptions: "",
  remoteClusterTimeout: "10 seconds",
  informers: { minBackoff: "50 millis", maxBackoff: "500 millis" },
  ...overrides,
})

/** A logger keeping every line as "LEVEL message". */
const capture = () => {
  const lines: Array<string> = []
  const logger = Logger.make(({ logLevel, message }) => {
    lines.push(`${logLevel.label} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

const environment = (local: Orchestrator, logger: Layer.Layer<never>) =>
  Layer.mergeAll(
    orchestratorLayer(local, { clusterId: "local" }),
    configMemory([]),
    meshMemory(),
    metricsLayer("test"),
    logger,
  )

const putService = (s: Orchestrator, ip: string) => {
  s.put({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "reviews", namespace: "default" },
    spec: {
      clusterIP: "10.96.0.20",
      selector: { app: "reviews" },
      ports: [{ name: "http", port: 9080, targetPort: 8080 }],
    },
  })
  s.put({
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name: "reviews-1", namespace: "default", labels: { "kubernetes.io/service-name": "reviews" } },
    addressType: "IPv4",
    endpoints: [{ addresses: [ip], conditions: { ready: true } }],
    ports: [{ name: "http", port: 8080, protocol: "TCP" }],
  })
}

const putSecret = (s: Orchestrator, name: string, data: Record<string, string>, label = "mesh/multiCluster") =>
  s.put({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: NS, labels: { [label]: "true" } },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")])),
  })

const kubeconfigOf = (s: Orchestrator) => fs.readFileSync(s.kubeconfig(), "utf8")

const until = (registry: ServiceRegistryShape, predicate: (s: RegistrySnapshot) => boolean) =>
  registry.snapshot.pipe(
    Effect.repeat({ until: predicate, schedule: Schedule.spaced("20 millis") }),
    Effect.timeout(Duration.seconds(15)),
  )

const untilLine = (lines: ReadonlyArray<string>, text: string) =>
  Effect.sync(() => lines.some((l) => l.includes(text))).pipe(
    Effect.repeat({ until: (found) => found, schedule: Schedule.spaced("20 millis") }),
    Effect.timeout(Duration.seconds(15)),
  )

const managed = (clusterType: string) =>
  Effect.flatMap(Metrics, (m) =>
    Effect.promise(
      async () =>
        (await m.registry.getSingleMetric("meshd_managed_clusters")?.get())?.values.find(
          (v) => v.labels.cluster_type === clusterType,
        )?.value,
    ),
  )

const endpointClusters = (s: RegistrySnapshot) => s.endpoints(HOST, "default").map((e) => `${e.clusterId}/${e.address}`)

describe("multicluster controller", () => {
  it.scopedLive("remote clusters from secrets: merged, restarted on change, refused, skipped and removed", () =>
    Effect.gen(function* () {
      const local = yield* orchestrator({ tls: false, namespaces: ["default", NS] })
      const remote = yield* orchestrator({ token: "remote-token", namespaces: ["default", NS] })
      const other = yield* orchestrator({ token: "other-token", namespaces: ["default", NS] })
      putService(local, "10.1.0.1")
      putService(remote, "10.2.0.1")
      putSecret(local, "remote-east", { east: kubeconfigOf(remote), local: kubeconfigOf(other) })
      const { lines, layer } = capture()
      yield* Effect.gen(function* () {
        const localRegistry = yield* makeOrchestratorRegistry({ ...registryOptions, clusterId: "local" })
        const controller = yield* makeMulticlusterController(options())
        const aggregate = yield* makeAggregateRegistry([localRegistry, controller.registry])
        yield* aggregate.awaitSynced.pipe(Effect.timeout(Duration.seconds(15)))
        // Ready only once the remote cluster present at start has synced.
        const first = yield* aggregate.snapshot
        expect(first.service(HOST, "default")?.clusterId).toBe("local")
        expect(endpointClusters(first)).toEqual(["local/10.1.0.1", "east/10.2.0.1"])
        expect(yield* controller.clusters).toEqual([{ clusterId: "east", secret: `${NS}/remote-east`, synced: true }])
        expect(lines.some((l) => l.includes("ignoring cluster local of secret mesh-system/remote-east"))).toBe(true)
        expect(yield* managed("local")).toBe(1)
        expect(yield* managed("remote")).toBe(1)

        // Remote changes flow through.
        putService(remote, "10.2.0.2")
        yield* until(aggregate, (s) => endpointClusters(s).includes("east/10.2.0.2"))

        // A second secret (upstream label): a bad kubeconfig and an exec one are skipped with a
        // log naming secret and key; a good one joins; east is unaffected.
        const execConfig = stringify({
          clusters: [{ name: "x", cluster: { server: remote.url } }],
          users: [
            { name: "x", user: { exec: { apiVersion: "client.authentication.k8s.io/v1", command: "/bin/true" } } },
          ],
          contexts: [{ name: "x", context: { cluster: "x", user: "x" } }],
          "current-context": "x",
        })
        putService(other, "10.3.0.1")
        putSecret(
          local,
          "more",
          { broken: "clusters: [", execd: execConfig, empty: "kind: Config\n", west: kubeconfigOf(other) },
          "istio/multiCluster",
        )
        yield* until(aggregate, (s) => endpointClusters(s).includes("west/10.3.0.1"))
        yield* untilLine(lines, "skipping remote cluster execd of secret mesh-system/more (key execd)")
        expect(lines.find((l) => l.includes("cluster execd"))).toContain('user "x": exec is not allowed')
        expect(lines.find((l) => l.includes("cluster broken"))).toMatch(
          /^ERROR skipping remote cluster broken of secret mesh-system\/more \(key broken\): kubeconfig cannot be loaded/,
        )
        expect(lines.some((l) => l.startsWith("ERROR skipping remote cluster empty of secret mesh-system/more"))).toBe(
          true,
        )
        expect((yield* controller.clusters).map((c) => c.clusterId).sort()).toEqual(["east", "west"])
        expect(yield* managed("remote")).toBe(2)
        expect(endpointClusters(yield* aggregate.snapshot)).toContain("east/10.2.0.2")

        // The exec option allowed by the variable would be accepted (not run here): see the unit tests.
        // Changing east's kubeconfig to point at `other` restarts it; the old instance serves
        // until the new one has synced, then east's endpoints come from `other`.
        putSecret(local, "remote-east", { east: kubeconfigOf(other) })
        yield* until(aggregate, (s) => endpointClusters(s).includes("east/10.3.0.1"))
        expect(endpointClusters(yield* aggregate.snapshot)).not.toContain("east/10.2.0.2")
        expect(lines.some((l) => l.includes("restarting remote cluster east"))).toBe(true)

        // Secret deleted: its cluster and everything only it served go.
        local.remove("v1", "Secret", NS, "more")
        yield* until(aggregate, (s) => !endpointClusters(s).includes("west/10.3.0.1"))
        local.remove("v1", "Secret", NS, "remote-east")
        yield* until(aggregate, (s) => endpointClusters(s).join() === "local/10.1.0.1")
        expect(yield* controller.clusters).toEqual([])
        expect(yield* managed("remote")).toBe(0)
      }).pipe(Effect.provide(environment(local, layer)))
    }),
  )

  it.scopedLive("a remote cluster down at start delays readiness until PILOT_REMOTE_CLUSTER_TIMEOUT", () =>
    Effect.gen(function* () {
      const local = yield* orchestrator({ tls: false, namespaces: ["default", NS] })
      const remote = yield* orchestrator({ token: "remote-token", namespaces: ["default", NS] })
      putService(remote, "10.2.0.1")
      putSecret(local, "remote-east", { east: kubeconfigOf(remote) })
      yield* Effect.promise(() => remote.down())
      const { lines, layer } = capture()
      yield* Effect.gen(function* () {
        const controller = yield* makeMulticlusterController(options({ remoteClusterTimeout: "1500 millis" }))
        const started = Date.now()
        yield* controller.registry.awaitSynced.pipe(Effect.timeout(Duration.seconds(15)))
        expect(Date.now() - started).toBeGreaterThanOrEqual(1000)
        expect(
          lines.some((l) => /^ERROR remote clusters failed to sync after .*: east; ready without them/.test(l)),
        ).toBe(true)
        expect(yield* controller.clusters).toEqual([{ clusterId: "east", secret: `${NS}/remote-east`, synced: false }])
        // The cluster joins when its API server comes back.
        yield* Effect.promise(() => remote.up())
        yield* until(controller.registry, (s) => endpointClusters(s).includes("east/10.2.0.1"))
      }).pipe(Effect.provide(environment(local, layer)))
    }),
  )

  it.scopedLive("with PILOT_REMOTE_CLUSTER_TIMEOUT 0 readiness waits for the remote cluster", () =>
    Effect.gen(function* () {
      const local = yield* orchestrator({ tls: false, namespaces: ["default", NS] })
      const remote = yield* orchestrator({ token: "remote-token", namespaces: ["default", NS] })
      putService(remote, "10.2.0.1")
      putSecret(local, "remote-east", { east: kubeconfigOf(remote) })
      yield* Effect.promise(() => remote.down())
      const { layer } = capture()
      yield* Effect.gen(function* () {
        const controller = yield* makeMulticlusterController(options({ remoteClusterTimeout: 0 }))
        const early = yield* controller.registry.awaitSynced.pipe(Effect.timeoutOption(Duration.millis(1500)))
        expect(early._tag).toBe("None")
        yield* Effect.promise(() => remote.up())
        yield* controller.registry.awaitSynced.pipe(Effect.timeout(Duration.seconds(15)))
        expect(endpointClusters(yield* controller.registry.snapshot)).toEqual(["east/10.2.0.1"])
      }).pipe(Effect.provide(environment(local, layer)))
    }),
  )
})
