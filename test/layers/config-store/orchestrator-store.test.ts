/**
 * The orchestrator config store against the in-process orchestrator API server through the real
 * client and informers: objects created as kubectl sends them appear, change and go; invalid
 * objects are skipped, logged and counted, and never replace a valid version; the upstream alias
 * groups work and lose to the mesh groups; absent CRDs do not block sync and are picked up once
 * installed; unknown versions are reported; a relist that finds nothing new publishes nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Logger, Queue, type Scope } from "effect"
import {
  makeOrchestratorConfigStore,
  type OrchestratorStoreOptions,
} from "../../../src/layers/config-store/orchestrator-store.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import type { ConfigChangeEvent } from "../../../src/services/config-store/config-store.js"
import { awaitEvent } from "../../../src/services/config-store/memory.js"
import type { Metrics } from "../../../src/services/metrics/metrics.js"
import { OrchestratorClient } from "../../../src/services/orchestrator/client.js"
import type { OrchObject } from "../../../src/services/orchestrator/objects.js"
import type { ResourceRef } from "../../../src/services/orchestrator/resources.js"
import { metricValue, poll } from "../../support/metrics.js"
import { type CustomResource, type OrchestratorOptions, startOrchestrator } from "../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../support/orchestrator/layers.js"

const ALL_VERSIONS = ["v1", "v1beta1", "v1alpha3"]

const virtualServices = (group: string, versions = ALL_VERSIONS): CustomResource => ({
  group,
  versions,
  kind: "VirtualService",
  plural: "virtualservices",
  shortNames: ["vs"],
})
const destinationRules = (group: string): CustomResource => ({
  group,
  versions: ALL_VERSIONS,
  kind: "DestinationRule",
  plural: "destinationrules",
})

const vsRef = (group: string, version = "v1"): ResourceRef => ({
  group,
  version,
  plural: "virtualservices",
  kind: "VirtualService",
  namespaced: true,
})

/** A VirtualService as `kubectl apply` sends it. */
const vs = (group: string, name: string, spec: Record<string, unknown>, namespace = "default") => ({
  apiVersion: `${group}/v1`,
  kind: "VirtualService",
  metadata: { name, namespace, labels: { app: name } },
  spec,
})
const routeTo = (host: string) => ({ hosts: [host], http: [{ route: [{ destination: { host } }] }] })

interface Line {
  readonly level: string
  readonly message: string
  readonly annotations: Record<string, unknown>
}

/** A logger that keeps every line. */
const capture = () => {
  const lines: Array<Line> = []
  const logger = Logger.make(({ logLevel, message, annotations }) => {
    const record: Record<string, unknown> = {}
    for (const [k, v] of annotations) record[k] = v
    lines.push({
      level: logLevel.label,
      message: String(Array.isArray(message) ? message.join(" ") : message),
      annotations: record,
    })
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}

const within = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.timeout(self, Duration.seconds(10))

/** A started test API server for the scope of a test. */
const orchestrator = (options: OrchestratorOptions) =>
  Effect.acquireRelease(
    Effect.promise(() => startOrchestrator({ tls: false, ...options })),
    (server) => Effect.promise(() => server.close()),
  )

/**
 * Runs `body` with a store over a fresh server (its client, informers, metrics and a captured
 * log), once the store has synced.
 */
const withStore = <A, E>(
  serverOptions: OrchestratorOptions,
  body: (ctx: {
    readonly server: Effect.Effect.Success<ReturnType<typeof orchestrator>>
    readonly store: Effect.Effect.Success<ReturnType<typeof makeOrchestratorConfigStore>>
    readonly lines: ReadonlyArray<Line>
  }) => Effect.Effect<A, E, OrchestratorClient | Metrics | Scope.Scope>,
  storeOptions: OrchestratorStoreOptions = {},
  before: (server: Effect.Effect.Success<ReturnType<typeof orchestrator>>) => void = () => {},
) =>
  Effect.gen(function* () {
    const server = yield* orchestrator(serverOptions)
    before(server)
    const { lines, layer } = capture()
    return yield* Effect.gen(function* () {
      const store = yield* makeOrchestratorConfigStore(storeOptions)
      yield* within(store.store.awaitSynced)
      return yield* body({ server, store, lines })
    }).pipe(Effect.provide(Layer.mergeAll(orchestratorLayer(server), metricsLayer("test"), layer)))
  })

const hostsOf = (event: ConfigChangeEvent, name: string, namespace = "default") =>
  (event.snapshot.get("VirtualService", namespace, name)?.spec as { hosts?: Array<string> } | undefined)?.hosts

describe("orchestrator config store", () => {
  it.scopedLive("objects created, patched and deleted through the API appear, change and go", () =>
    withStore(
      { customResources: [virtualServices("networking.mesh.io"), destinationRules("networking.mesh.io")] },
      ({ store }) =>
        Effect.gen(function* () {
          const client = yield* OrchestratorClient
          // Present before start: in the store once synced.
          const synced = yield* store.store.snapshot
          expect(synced.list("VirtualService").map((r) => r.meta.name)).toEqual(["early"])
          expect(synced.get("VirtualService", "default", "early")?.meta.labels).toEqual({ app: "early" })
          // Every other kind's CRD is absent: sync did not wait for them.
          expect(yield* store.watched).toEqual([
            { group: "networking.mesh.io", kind: "DestinationRule", version: "v1" },
            { group: "networking.mesh.io", kind: "VirtualService", version: "v1" },
          ])

          const { events } = yield* store.store.subscribe
          yield* client.create(vsRef("networking.mesh.io"), vs("networking.mesh.io", "reviews", routeTo("reviews")))
          const added = yield* within(awaitEvent(events, (e) => e.changes.length > 0))
          expect(added.changes.map((c) => `${c.type} ${c.key}`)).toEqual(["added VirtualService/default/reviews"])
          const resource = added.snapshot.get("VirtualService", "default", "reviews")
          expect(resource?.group).toBe("networking.mesh.io")
          expect(resource?.source?.file).toBe("orchestrator:networking.mesh.io/VirtualService/default/reviews")
          expect(hostsOf(added, "reviews")).toEqual(["reviews"])

          yield* client.mergePatch(vsRef("networking.mesh.io"), "default", "reviews", {
            spec: { hosts: ["reviews.v2"] },
          })
          const updated = yield* within(awaitEvent(events, (e) => e.changes.length > 0))
          expect(updated.changes.map((c) => `${c.type} ${c.key}`)).toEqual(["updated VirtualService/default/reviews"])
          expect(hostsOf(updated, "reviews")).toEqual(["reviews.v2"])

          yield* client.remove(vsRef("networking.mesh.io"), "default", "reviews")
          const removed = yield* within(awaitEvent(events, (e) => e.changes.length > 0))
          expect(removed.changes.map((c) => `${c.type} ${c.key}`)).toEqual(["removed VirtualService/default/reviews"])
        }),
      {},
      (server) => {
        server.put(vs("networking.mesh.io", "early", routeTo("early")))
      },
    ),
  )

  it.scopedLive(
    "an invalid object is skipped, logged and counted; an invalid update keeps the last valid version",
    () =>
      withStore({ customResources: [virtualServices("networking.mesh.io")] }, ({ store, lines }) =>
        Effect.gen(function* () {
          const client = yield* OrchestratorClient
          const ref = vsRef("networking.mesh.io")
          const labels = {
            group: "networking.mesh.io",
            version: "v1",
            resource: "virtualservices",
            reason: "invalid_resource",
          }
          const { events } = yield* store.store.subscribe

          yield* client.create(ref, vs("networking.mesh.io", "bad", { ...routeTo("bad"), bogus: true }))
          const rejected = yield* within(awaitEvent(events, (e) => e.issuesChanged))
          expect(rejected.changes).toEqual([])
          expect(rejected.snapshot.get("VirtualService", "default", "bad")).toBeUndefined()
          expect(rejected.snapshot.issues.map((i) => `${i.file} ${i.kind} ${i.namespace}/${i.name} ${i.path}`)).toEqual(
            ["orchestrator:networking.mesh.io/VirtualService/default/bad VirtualService default/bad spec.bogus"],
          )
          expect(yield* metricValue("mesh_validation_failed", labels)).toBe(1)
          const errors = lines.filter((l) => l.level === "ERROR")
          expect(errors).toHaveLength(1)
          expect(errors[0]?.message).toMatch(
            /^invalid VirtualService default\/bad \(networking\.mesh\.io\/v1\): field spec\.bogus: .*; not served$/,
          )
          expect(errors[0]?.annotations).toMatchObject({
            kind: "VirtualService",
            name: "default/bad",
            field: "spec.bogus",
            scope: "kube",
          })

          yield* client.create(ref, vs("networking.mesh.io", "good", routeTo("good")))
          const good = yield* within(awaitEvent(events, (e) => e.changes.length > 0))
          expect(hostsOf(good, "good")).toEqual(["good"])

          // An invalid update of a valid object: the last valid version stays served.
          yield* client.mergePatch(ref, "default", "good", { spec: { hosts: ["changed"], http: [{ route: "nope" }] } })
          const stale = yield* within(awaitEvent(events, (e) => e.issuesChanged))
          expect(stale.changes).toEqual([])
          expect(hostsOf(stale, "good")).toEqual(["good"])
          expect(stale.snapshot.files.get("orchestrator:networking.mesh.io/VirtualService/default/good")?.stale).toBe(
            true,
          )
          expect(yield* metricValue("mesh_validation_failed", labels)).toBe(2)
          const staleLine = lines.filter((l) => l.level === "ERROR")[1]
          expect(staleLine?.message).toMatch(
            /^invalid VirtualService default\/good .*field spec\.http\[0\]\.route: .*serving its last valid version until it is fixed$/,
          )

          // Fixed: served again, the issue cleared.
          yield* client.mergePatch(ref, "default", "good", {
            spec: { hosts: ["fixed"], http: [{ route: [{ destination: { host: "fixed" } }] }] },
          })
          const fixed = yield* within(awaitEvent(events, (e) => e.changes.length > 0))
          expect(hostsOf(fixed, "good")).toEqual(["fixed"])
          expect(fixed.snapshot.issues.map((i) => i.name)).toEqual(["bad"])
          expect(
            lines.some(
              (l) =>
                l.level === "INFO" &&
                l.message.includes("VirtualService default/good (networking.mesh.io/v1): valid again"),
            ),
          ).toBe(true)
          expect(yield* metricValue("mesh_validation_failed", labels)).toBe(2)
        }),
      ),
  )

  it.scopedLive("the upstream alias group works; the same name under the mesh group wins", () =>
    withStore(
      {
        customResources: [
          virtualServices("networking.mesh.io"),
          virtualServices("networking.istio.io", ["v1alpha3", "v1beta1", "v1"]),
        ],
      },
      ({ store, lines }) =>
        Effect.gen(function* () {
          const client = yield* OrchestratorClient
          expect(yield* store.watched).toEqual([
            { group: "networking.istio.io", kind: "VirtualService", version: "v1alpha3" },
            { group: "networking.mesh.io", kind: "VirtualService", version: "v1" },
          ])
          const { events } = yield* store.store.subscribe
          yield* client.create(vsRef("networking.istio.io", "v1alpha3"), {
            ...vs("networking.istio.io", "r", routeTo("from-istio")),
            apiVersion: "networking.istio.io/v1alpha3",
          })
          const upstream = yield* within(awaitEvent(events, (e) => e.changes.length > 0))
          expect(hostsOf(upstream, "r")).toEqual(["from-istio"])
          expect(upstream.snapshot.get("VirtualService", "default", "r")?.group).toBe("networking.mesh.io")

          yield* client.create(vsRef("networking.mesh.io"), vs("networking.mesh.io", "r", routeTo("from-mesh")))
          const mesh = yield* within(awaitEvent(events, (e) => e.changes.length > 0))
          expect(hostsOf(mesh, "r")).toEqual(["from-mesh"])
          expect(
            lines.some(
              (l) =>
                l.level === "INFO" && l.message.startsWith("VirtualService/default/r exists under more than one group"),
            ),
          ).toBe(true)

          // An upstream change while shadowed changes nothing served.
          yield* client.mergePatch(vsRef("networking.istio.io", "v1alpha3"), "default", "r", {
            spec: { hosts: ["from-istio-2"] },
          })
          yield* client.remove(vsRef("networking.mesh.io"), "default", "r")
          const back = yield* within(awaitEvent(events, (e) => e.changes.length > 0))
          expect(back.changes.map((c) => `${c.type} ${c.key}`)).toEqual(["updated VirtualService/default/r"])
          expect(hostsOf(back, "r")).toEqual(["from-istio-2"])
        }),
    ),
  )

  it.scopedLive("a served version it does not know is logged once; a known one is watched", () =>
    withStore({ customResources: [virtualServices("networking.mesh.io", ["v2", "v1"])] }, ({ store, lines }) =>
      Effect.gen(function* () {
        const client = yield* OrchestratorClient
        expect(yield* store.watched).toEqual([{ group: "networking.mesh.io", kind: "VirtualService", version: "v1" }])
        const warnings = lines.filter((l) => l.level === "WARN" && l.message.includes("does not know"))
        expect(warnings.map((l) => l.message)).toEqual([
          "networking.mesh.io serves version(s) v2 that this mesh-discovery does not know; watching v1 instead",
        ])
        const { events } = yield* store.store.subscribe
        yield* client.create(vsRef("networking.mesh.io", "v2"), {
          ...vs("networking.mesh.io", "via-v2", routeTo("x")),
          apiVersion: "networking.mesh.io/v2",
        })
        const added = yield* within(awaitEvent(events, (e) => e.changes.length > 0))
        expect(added.snapshot.get("VirtualService", "default", "via-v2")?.version).toBe("v1")
      }),
    ),
  )

  it.scopedLive("a CRD installed after start is picked up; discovery errors are retried", () =>
    withStore(
      { customResources: [virtualServices("networking.mesh.io")] },
      ({ server, store }) =>
        Effect.gen(function* () {
          const client = yield* OrchestratorClient
          // The failed discovery of networking.mesh.io was retried before sync.
          expect(server.requestCount({ verb: "get", path: /^\/apis\/networking\.mesh\.io$/ })).toBeGreaterThanOrEqual(2)
          expect((yield* store.watched).map((w) => w.kind)).toEqual(["VirtualService"])
          server.registerCustomResource(destinationRules("networking.mesh.io"))
          yield* poll(store.watched, (w) => w.length === 2, "10 seconds")
          const { events } = yield* store.store.subscribe
          yield* client.create(
            {
              group: "networking.mesh.io",
              version: "v1",
              plural: "destinationrules",
              kind: "DestinationRule",
              namespaced: true,
            },
            {
              apiVersion: "networking.mesh.io/v1",
              kind: "DestinationRule",
              metadata: { name: "reviews", namespace: "default" },
              spec: { host: "reviews" },
            } as OrchObject,
          )
          const added = yield* within(awaitEvent(events, (e) => e.changes.length > 0))
          expect(added.changes.map((c) => `${c.type} ${c.key}`)).toEqual(["added DestinationRule/default/reviews"])
        }),
      { rediscoverInterval: "100 millis" },
      (server) => server.failNext({ verb: "get", path: /^\/apis\/networking\.mesh\.io$/, status: 500 }),
    ),
  )

  it.scopedLive("watchNamespace limits the store to one namespace", () =>
    withStore(
      { customResources: [virtualServices("networking.mesh.io")], namespaces: ["default", "other"] },
      ({ store }) =>
        Effect.gen(function* () {
          const snapshot = yield* store.store.snapshot
          expect(snapshot.list("VirtualService").map((r) => `${r.meta.namespace}/${r.meta.name}`)).toEqual(["other/b"])
        }),
      { watchNamespace: "other" },
      (server) => {
        server.put(vs("networking.mesh.io", "a", routeTo("a")))
        server.put(vs("networking.mesh.io", "b", routeTo("b"), "other"))
      },
    ),
  )

  it.scopedLive(
    "a relist after the history expired and the watches dropped publishes nothing when nothing changed",
    () =>
      withStore(
        { customResources: [virtualServices("networking.mesh.io")] },
        ({ server, store }) =>
          Effect.gen(function* () {
            const client = yield* OrchestratorClient
            expect((yield* store.store.snapshot).size).toBe(3)
            const { events } = yield* store.store.subscribe
            const lists = () => server.requestCount({ verb: "list", path: /\/virtualservices$/ })
            const before = lists()
            // Expire the version the informer holds: the watch dropped, a write elsewhere moves
            // the version on, then the history is forgotten.
            server.dropWatches()
            server.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "elsewhere", namespace: "default" } })
            server.compact()
            yield* poll(Effect.sync(lists), (n) => n > before, "10 seconds")
            // The next event is the sentinel's: the relist published nothing.
            yield* client.create(vsRef("networking.mesh.io"), vs("networking.mesh.io", "sentinel", routeTo("s")))
            const next = yield* within(Queue.take(events))
            expect(next.changes.map((c) => `${c.type} ${c.key}`)).toEqual(["added VirtualService/default/sentinel"])
            expect(next.issuesChanged).toBe(false)
            expect(yield* Queue.size(events)).toBe(0)
          }),
        {},
        (server) => {
          for (const name of ["a", "b", "c"]) server.put(vs("networking.mesh.io", name, routeTo(name)))
          // An invalid one too: validating it again must not count as an issue change.
          server.put(vs("networking.mesh.io", "d", { ...routeTo("d"), bogus: 1 }))
        },
      ),
  )
})
