/**
 * WorkloadEntry auto-registration against the in-process orchestrator API server through the
 * real client and informers, on the TestClock (the grace period is the default 10 s): a proxy's
 * connection creates its entry from the WorkloadGroup; its last stream closing marks it
 * disconnected; it is deleted once the grace period has passed and not before, nor when the
 * proxy came back; an entry left disconnected by an earlier instance is cleaned up too; a
 * missing group is an error, counted; health reports set the Healthy condition.
 */
import { Effect, Layer, TestClock, TestContext } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import {
  type AutoRegistrationOptions,
  DELETES_METRIC,
  ERRORS_METRIC,
  makeAutoRegistration,
  SUCCESS_METRIC,
  UNREGISTER_METRIC,
} from "../../../src/layers/registry/autoregistration.js"
import { Metrics } from "../../../src/services/metrics/metrics.js"
import {
  AUTO_REGISTRATION_GROUP_ANNOTATION,
  CONNECTED_AT_ANNOTATION,
  DISCONNECTED_AT_ANNOTATION,
  type OrchWorkloadEntry,
  WORKLOAD_CONTROLLER_ANNOTATION,
} from "../../../src/services/registry/autoregistration/objects.js"
import type { ProxyConnectionsShape } from "../../../src/services/registry/autoregistration/proxy-connections.js"
import { type Orchestrator, startOrchestrator } from "../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../support/orchestrator/layers.js"

const API = "networking.mesh.io/v1"
let server: Orchestrator
beforeAll(async () => {
  server = await startOrchestrator({
    customResources: [
      { group: "networking.mesh.io", versions: ["v1"], kind: "WorkloadEntry", plural: "workloadentries" },
      { group: "networking.mesh.io", versions: ["v1"], kind: "WorkloadGroup", plural: "workloadgroups" },
    ],
  })
})
afterAll(() => server.close())

const START = Date.parse("2026-01-01T00:00:00Z")
let namespaces = 0
/** A fresh namespace with a WorkloadGroup `vms` in it. */
const freshNamespace = (probe = false) => {
  const namespace = `wle-${++namespaces}`
  server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } })
  server.put({
    apiVersion: API,
    kind: "WorkloadGroup",
    metadata: { name: "vms", namespace, uid: `uid-${namespace}` },
    spec: {
      metadata: { labels: { app: "vm" } },
      template: { serviceAccount: "vm-sa", ports: { http: 8080 } },
      ...(probe ? { probe: { httpGet: { port: 8080 } } } : {}),
    },
  })
  return namespace
}
const proxy = (namespace: string, ip = "10.0.0.7", group = "vms") => ({
  id: `sidecar~${ip}~vm.${namespace}~${namespace}.svc.cluster.local`,
  metadata: { AUTO_REGISTER_GROUP: group, NAMESPACE: namespace, LABELS: { version: "v1" } },
})
const entryOf = (namespace: string, name: string) =>
  server.get(API, "WorkloadEntry", namespace, name) as OrchWorkloadEntry | undefined

const realSleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))
const eventually = (check: () => boolean, within = 5000) =>
  Effect.gen(function* () {
    const deadline = Date.now() + within
    while (!check()) {
      if (Date.now() > deadline) return yield* Effect.die(new Error("condition not met in time"))
      yield* realSleep(20)
    }
  })

const counter = (name: string) =>
  Effect.gen(function* () {
    const metric = (yield* Metrics).registry.getSingleMetric(name)
    if (metric === undefined) return 0
    return (yield* Effect.promise(async () => metric.get())).values.reduce((sum, v) => sum + v.value, 0)
  })

/** The server stores a write before its answer reaches the client, which then counts it. */
const counterReaches = (name: string, value: number) =>
  Effect.gen(function* () {
    const deadline = Date.now() + 5000
    while ((yield* counter(name)) < value && Date.now() < deadline) yield* realSleep(20)
    return yield* counter(name)
  })

const options: AutoRegistrationOptions = {
  autoRegistration: true,
  healthChecks: true,
  gracePeriod: "10 seconds",
  instanceId: "meshd-0",
}

const run = <A, E>(
  body: (hooks: ProxyConnectionsShape) => Effect.Effect<A, E, Metrics>,
  before: Effect.Effect<void> = Effect.void,
) =>
  Effect.runPromise(
    Effect.gen(function* () {
      yield* TestClock.setTime(START)
      yield* before
      const hooks = yield* makeAutoRegistration(options)
      return yield* body(hooks)
    }).pipe(
      Effect.provide(Layer.merge(orchestratorLayer(server), metricsLayer("test"))),
      Effect.scoped,
      Effect.provide(TestContext.TestContext),
    ) as Effect.Effect<A, E, never>,
  )

describe("WorkloadEntry auto-registration", () => {
  it("registers on connect, marks the last disconnect, deletes after the grace period", async () => {
    const ns = freshNamespace()
    await run((hooks) =>
      Effect.gen(function* () {
        yield* hooks.onConnect("c1", proxy(ns))
        yield* hooks.onConnect("c2", proxy(ns))
        yield* eventually(() => entryOf(ns, "vms-10.0.0.7") !== undefined)
        const entry = entryOf(ns, "vms-10.0.0.7")!
        expect(entry.spec).toEqual({
          address: "10.0.0.7",
          serviceAccount: "vm-sa",
          ports: { http: 8080 },
          labels: { app: "vm", version: "v1" },
        })
        expect(entry.metadata.annotations?.[AUTO_REGISTRATION_GROUP_ANNOTATION]).toBe("vms")
        expect(entry.metadata.annotations?.[WORKLOAD_CONTROLLER_ANNOTATION]).toBe("meshd-0")
        expect(entry.metadata.annotations?.[CONNECTED_AT_ANNOTATION]).toBe("2026-01-01T00:00:00.000Z")
        expect(entry.metadata.ownerReferences?.[0]).toMatchObject({ kind: "WorkloadGroup", name: "vms" })
        expect(yield* counterReaches(SUCCESS_METRIC, 1)).toBe(1)

        // One stream of two closes: still connected.
        yield* hooks.onDisconnect("c1")
        yield* TestClock.adjust("1 second")
        yield* hooks.onDisconnect("c2")
        yield* eventually(
          () => entryOf(ns, "vms-10.0.0.7")?.metadata.annotations?.[DISCONNECTED_AT_ANNOTATION] !== undefined,
        )
        const marked = entryOf(ns, "vms-10.0.0.7")!.metadata.annotations!
        expect(marked[DISCONNECTED_AT_ANNOTATION]).toBe("2026-01-01T00:00:01.000Z")
        expect(marked[CONNECTED_AT_ANNOTATION]).toBeUndefined()
        expect(yield* counterReaches(UNREGISTER_METRIC, 1)).toBe(1)

        yield* TestClock.adjust("9999 millis")
        yield* realSleep(300)
        expect(entryOf(ns, "vms-10.0.0.7")).toBeDefined()
        yield* TestClock.adjust("1 millis")
        yield* eventually(() => entryOf(ns, "vms-10.0.0.7") === undefined)
        expect(yield* counterReaches(DELETES_METRIC, 1)).toBe(1)
      }),
    )
  })

  it("keeps an entry whose proxy reconnected within the grace period", async () => {
    const ns = freshNamespace()
    await run((hooks) =>
      Effect.gen(function* () {
        yield* hooks.onConnect("c1", proxy(ns))
        yield* hooks.onDisconnect("c1")
        yield* eventually(
          () => entryOf(ns, "vms-10.0.0.7")?.metadata.annotations?.[DISCONNECTED_AT_ANNOTATION] !== undefined,
        )
        yield* TestClock.adjust("5 seconds")
        yield* hooks.onConnect("c2", proxy(ns))
        yield* eventually(
          () => entryOf(ns, "vms-10.0.0.7")?.metadata.annotations?.[DISCONNECTED_AT_ANNOTATION] === undefined,
        )
        yield* TestClock.adjust("20 seconds")
        yield* realSleep(300)
        expect(entryOf(ns, "vms-10.0.0.7")?.metadata.annotations?.[CONNECTED_AT_ANNOTATION]).toBe(
          "2026-01-01T00:00:05.000Z",
        )
      }),
    )
  })

  it("cleans up entries an earlier instance left disconnected, and leaves others alone", async () => {
    const ns = freshNamespace()
    const left = (name: string, annotations: Record<string, string>) =>
      server.put({
        apiVersion: API,
        kind: "WorkloadEntry",
        metadata: { name, namespace: ns, annotations },
        spec: { address: "10.0.0.9" },
      })
    left("vms-old", {
      [AUTO_REGISTRATION_GROUP_ANNOTATION]: "vms",
      [WORKLOAD_CONTROLLER_ANNOTATION]: "meshd-gone",
      [DISCONNECTED_AT_ANNOTATION]: "2025-12-31T23:59:56.000Z",
    })
    left("manual", { [DISCONNECTED_AT_ANNOTATION]: "2025-12-31T23:00:00.000Z" })
    await run(() =>
      Effect.gen(function* () {
        yield* realSleep(300)
        expect(entryOf(ns, "vms-old")).toBeDefined()
        yield* TestClock.adjust("6 seconds")
        yield* eventually(() => entryOf(ns, "vms-old") === undefined)
        expect(entryOf(ns, "manual")).toBeDefined()
      }),
    )
  })

  it("counts a proxy naming a missing group as an error and creates nothing", async () => {
    const ns = freshNamespace()
    await run((hooks) =>
      Effect.gen(function* () {
        yield* hooks.onConnect("c1", proxy(ns, "10.0.0.8", "nope"))
        expect(yield* counterReaches(ERRORS_METRIC, 1)).toBe(1)
        expect(server.list(API, "WorkloadEntry", ns)).toEqual([])
      }),
    )
  })

  it("sets the Healthy condition from health reports of a health-checked entry", async () => {
    const ns = freshNamespace(true)
    const healthy = () => entryOf(ns, "vms-10.0.0.7")?.status?.conditions?.find((c) => c.type === "Healthy")
    await run((hooks) =>
      Effect.gen(function* () {
        yield* hooks.onConnect("c1", proxy(ns))
        yield* hooks.onHealth("c1", { healthy: false, message: "connection refused" })
        yield* eventually(() => healthy()?.status === "False")
        expect(healthy()?.message).toBe("connection refused")
        yield* hooks.onHealth("c1", { healthy: true })
        yield* eventually(() => healthy()?.status === "True")
      }),
    )
  })
})
