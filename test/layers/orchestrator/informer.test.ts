/**
 * Informers against the in-process orchestrator API server through the real client: first list
 * from the watch cache, paged consistent relists, watch events in order, relist after 410 publishing only differences, recovery from an
 * API server that is down at start or answers 500, bookmarks; managedFields dropped on arrival.
 */
import { Effect, ManagedRuntime, Option, Queue, type Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { InformerSettings } from "../../../src/layers/orchestrator/informer.js"
import { type InformerBatch, type InformerShape, Informers } from "../../../src/services/orchestrator/informer.js"
import type { OrchConfigMap } from "../../../src/services/orchestrator/objects.js"
import { Resources } from "../../../src/services/orchestrator/resources.js"
import { type Orchestrator, startOrchestrator } from "../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../support/orchestrator/layers.js"

let server: Orchestrator
beforeAll(async () => {
  server = await startOrchestrator({ bookmarkIntervalMillis: 100 })
})
afterAll(() => server.close())

let counter = 0
const freshNamespace = () => {
  const name = `inf-${++counter}`
  server.put({ apiVersion: "v1", kind: "Namespace", metadata: { name } })
  return name
}
const configMap = (namespace: string, name: string, data: Record<string, string> = {}) =>
  server.put({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data })

const summary = (batch: InformerBatch<OrchConfigMap>) =>
  batch.events.map(
    (e) => `${e.type} ${e.object.metadata.name}${e.previous ? ` (was ${e.previous.data?.v ?? ""})` : ""}`,
  )

/** Takes batches until `count` events have arrived (with a deadline). */
const takeEvents = (queue: Queue.Dequeue<InformerBatch<OrchConfigMap>>, count: number) =>
  Effect.gen(function* () {
    const seen: Array<string> = []
    const relists: Array<boolean> = []
    while (seen.length < count) {
      const batch = yield* Queue.take(queue)
      seen.push(...summary(batch))
      relists.push(batch.relist)
    }
    return { seen, relists }
  }).pipe(Effect.timeout("5 seconds"))

/** Runs `body` with a synced ConfigMap informer of `ns` (the test layer's settings unless given), then disposes it. */
const withSyncedInformer = async (
  ns: string,
  settings: InformerSettings | undefined,
  body: (informer: InformerShape<OrchConfigMap>) => Effect.Effect<void, unknown, Scope.Scope>,
) => {
  const runtime = ManagedRuntime.make(orchestratorLayer(server, settings === undefined ? {} : { informers: settings }))
  try {
    await runtime.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const informer = yield* (yield* Informers).informer<OrchConfigMap>(Resources.configMaps, { namespace: ns })
          yield* informer.synced
          yield* body(informer)
        }),
      ),
    )
  } finally {
    await runtime.dispose()
  }
}

describe("informer", () => {
  it("lists from the watch cache first (resourceVersion=0, one answer), then follows the watch in order", async () => {
    const ns = freshNamespace()
    for (let i = 0; i < 5; i++) configMap(ns, `cm-${i}`, { v: "0" })
    await withSyncedInformer(ns, { pageSize: 2 }, (informer) =>
      Effect.gen(function* () {
        expect(
          informer
            .list()
            .map((c) => c.metadata.name)
            .sort(),
        ).toEqual(["cm-0", "cm-1", "cm-2", "cm-3", "cm-4"])
        expect(informer.get(ns, "cm-3")?.data?.v).toBe("0")
        const { objects, batches } = yield* informer.subscribe
        expect(objects).toHaveLength(5)
        configMap(ns, "cm-5", { v: "1" })
        configMap(ns, "cm-0", { v: "2" })
        server.remove("v1", "ConfigMap", ns, "cm-1")
        const { seen, relists } = yield* takeEvents(batches, 3)
        expect(seen).toEqual(["added cm-5", "updated cm-0 (was 0)", "deleted cm-1"])
        expect(relists.every((r) => !r)).toBe(true)
        expect(informer.get(ns, "cm-1")).toBeUndefined()
        expect(informer.list(ns)).toHaveLength(5)
      }),
    )
    // The first list asks for any version (the watch cache ignores limit): one request.
    const lists = server.requests().filter((r) => r.verb === "list" && r.path.endsWith(`/namespaces/${ns}/configmaps`))
    expect(lists.map((r) => new URLSearchParams(r.query).get("resourceVersion"))).toEqual(["0"])
  })

  it("keeps listed and watched objects without their managedFields", async () => {
    const ns = freshNamespace()
    const managed = (name: string, v: string) =>
      server.put({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name,
          namespace: ns,
          labels: { kept: "yes" },
          managedFields: [{ manager: "kubectl", operation: "Update", fieldsType: "FieldsV1", fieldsV1: {} }],
        },
        data: { v },
      })
    managed("listed", "0")
    await withSyncedInformer(ns, undefined, (informer) =>
      Effect.gen(function* () {
        const { batches } = yield* informer.subscribe
        managed("watched", "1")
        yield* takeEvents(batches, 1)
        for (const name of ["listed", "watched"]) {
          const o = informer.get(ns, name)
          expect(o?.metadata.labels).toEqual({ kept: "yes" })
          expect(o?.metadata).not.toHaveProperty("managedFields")
        }
      }),
    )
    // The server still has them: only the cache's copies are trimmed.
    expect(server.get("v1", "ConfigMap", ns, "listed")?.metadata).toHaveProperty("managedFields")
  })

  it("an object added and deleted within one batch ends deleted", async () => {
    const ns = freshNamespace()
    await withSyncedInformer(ns, undefined, (informer) =>
      Effect.gen(function* () {
        const { batches } = yield* informer.subscribe
        // Written in one tick: the watch delivers the three events together.
        configMap(ns, "flash")
        server.remove("v1", "ConfigMap", ns, "flash")
        configMap(ns, "marker")
        const { seen } = yield* takeEvents(batches, 3)
        expect(seen).toEqual(["added flash", "deleted flash", "added marker"])
        expect(informer.get(ns, "flash")).toBeUndefined()
        expect(informer.list(ns).map((c) => c.metadata.name)).toEqual(["marker"])
      }),
    )
  })

  it("relists after 410 Gone, consistently and page by page, and publishes only what changed meanwhile", async () => {
    const ns = freshNamespace()
    configMap(ns, "keep", { v: "0" })
    configMap(ns, "change", { v: "0" })
    configMap(ns, "drop", { v: "0" })
    await withSyncedInformer(ns, { pageSize: 2 }, (informer) =>
      Effect.gen(function* () {
        const { batches } = yield* informer.subscribe
        const listsBefore = server.requestCount({ verb: "list", path: new RegExp(`/namespaces/${ns}/configmaps`) })
        // Changes the watch never sees: the history is forgotten and the watch dropped.
        server.dropWatches()
        configMap(ns, "change", { v: "1" })
        server.remove("v1", "ConfigMap", ns, "drop")
        configMap(ns, "new", { v: "1" })
        server.compact()
        const { seen, relists } = yield* takeEvents(batches, 3)
        expect(seen.sort()).toEqual(["added new", "deleted drop", "updated change (was 0)"])
        expect(relists).toEqual([true])
        // keep, change and new at two per page, without resourceVersion (a consistent read).
        const relistRequests = server
          .requests()
          .filter((r) => r.verb === "list" && r.path.endsWith(`/namespaces/${ns}/configmaps`))
          .slice(listsBefore)
        expect(relistRequests.map((r) => new URLSearchParams(r.query).has("continue"))).toEqual([false, true])
        expect(relistRequests.every((r) => !new URLSearchParams(r.query).has("resourceVersion"))).toBe(true)
        // Another expiry with nothing changed here (a write elsewhere moves the version on
        // past the last bookmark): a relist, and no batch.
        const lists = server.requestCount({ verb: "list", path: new RegExp(`/namespaces/${ns}/configmaps`) })
        server.dropWatches()
        configMap("default", `elsewhere-${ns}`)
        server.compact()
        yield* Effect.gen(function* () {
          while (server.requestCount({ verb: "list", path: new RegExp(`/namespaces/${ns}/configmaps`) }) === lists)
            yield* Effect.sleep("20 millis")
        }).pipe(Effect.timeout("5 seconds"))
        configMap(ns, "after", { v: "1" })
        const next = yield* takeEvents(batches, 1)
        expect(next.seen).toEqual(["added after"])
      }),
    )
  })

  it("keeps retrying while the API server is down or failing, then syncs", async () => {
    const ns = freshNamespace()
    configMap(ns, "a")
    server.failNext({ verb: "list", path: new RegExp(`/namespaces/${ns}/configmaps`), count: 2, status: 500 })
    const runtime = ManagedRuntime.make(orchestratorLayer(server))
    try {
      await runtime.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const informer = yield* (yield* Informers).informer<OrchConfigMap>(Resources.configMaps, { namespace: ns })
            yield* informer.synced.pipe(Effect.timeout("5 seconds"))
            expect(informer.list()).toHaveLength(1)
          }),
        ),
      )
    } finally {
      await runtime.dispose()
    }
  })

  it("waits for an API server that is down at start", async () => {
    const ns = freshNamespace()
    configMap(ns, "a")
    await server.down()
    const runtime = ManagedRuntime.make(orchestratorLayer(server))
    try {
      await runtime.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const informer = yield* (yield* Informers).informer<OrchConfigMap>(Resources.configMaps, { namespace: ns })
            const early = yield* informer.synced.pipe(Effect.timeout("300 millis"), Effect.option)
            expect(Option.isNone(early)).toBe(true)
            expect(yield* informer.hasSynced).toBe(false)
            yield* Effect.promise(() => server.up())
            yield* informer.synced.pipe(Effect.timeout("5 seconds"))
            expect(informer.list()).toHaveLength(1)
            // And the watch works after the outage.
            const { batches } = yield* informer.subscribe
            configMap(ns, "b")
            expect((yield* takeEvents(batches, 1)).seen).toEqual(["added b"])
          }),
        ),
      )
    } finally {
      await runtime.dispose()
    }
  })

  it("backs off from a server that ends every watch at once", async () => {
    const ns = freshNamespace()
    const runtime = ManagedRuntime.make(orchestratorLayer(server))
    const watches = () => server.requestCount({ verb: "watch", path: new RegExp(`/namespaces/${ns}/configmaps`) })
    try {
      await runtime.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const informer = yield* (yield* Informers).informer<OrchConfigMap>(Resources.configMaps, { namespace: ns })
            yield* informer.synced
            const before = watches()
            // For one second every watch is cut as soon as it opens.
            const deadline = Date.now() + 1000
            while (Date.now() < deadline) {
              server.dropWatches()
              yield* Effect.sleep("5 millis")
            }
            // Backoff from 50 ms doubling: a handful of attempts, not one per round trip.
            expect(watches() - before).toBeLessThan(15)
            const { batches } = yield* informer.subscribe
            configMap(ns, "after")
            expect((yield* takeEvents(batches, 1)).seen).toEqual(["added after"])
          }),
        ),
      )
    } finally {
      await runtime.dispose()
    }
  })

  it("shares one informer per resource and options", async () => {
    const runtime = ManagedRuntime.make(orchestratorLayer(server))
    try {
      await runtime.runPromise(
        Effect.gen(function* () {
          const informers = yield* Informers
          const a = yield* informers.informer(Resources.namespaces)
          const b = yield* informers.informer(Resources.namespaces)
          const c = yield* informers.informer(Resources.namespaces, { labelSelector: "x=y" })
          expect(a).toBe(b)
          expect(c).not.toBe(a)
        }),
      )
    } finally {
      await runtime.dispose()
    }
  })
})
