import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option, Queue } from "effect"
import { makeDynamicAggregateRegistry } from "../../../src/services/registry/aggregate.js"
import { makeMockRegistry, mockService } from "../../../src/services/registry/mock.js"
import type { Endpoint } from "../../../src/services/registry/model.js"

const endpoint = (hostname: string, address: string, clusterId: string): Endpoint => ({
  hostname,
  namespace: "ns",
  servicePortName: "http",
  address,
  port: 8080,
  labels: {},
  serviceAccount: "",
  locality: "",
  network: "",
  weight: 1,
  healthStatus: "HEALTHY",
  clusterId,
})

const http = [{ name: "http", port: 80, protocol: "HTTP" as const }]

describe("dynamic aggregate registry", () => {
  it.scoped("members added at runtime merge after the static ones; removal drops only their share", () =>
    Effect.gen(function* () {
      const local = yield* makeMockRegistry(
        [mockService("shared.com", "ns", { ports: http, labels: { from: "local" } })],
        [endpoint("shared.com", "10.0.0.1", "local")],
      )
      const agg = yield* makeDynamicAggregateRegistry({ members: [local.registry] })
      yield* agg.registry.awaitSynced
      const { events } = yield* agg.registry.subscribe

      const remote = yield* makeMockRegistry(
        [mockService("shared.com", "ns", { ports: http, labels: { from: "remote" } }), mockService("r.com", "ns")],
        [endpoint("shared.com", "10.1.0.1", "east")],
      )
      yield* agg.add("east", remote.registry)
      const added = yield* Queue.take(events)
      expect(added).toMatchObject({ servicesAdded: ["ns/r.com"], endpointsChanged: ["ns/shared.com"] })
      expect(yield* agg.members).toEqual(["#0", "east"])
      // The local service wins; endpoints of both clusters are combined.
      expect(Option.getOrThrow(yield* agg.registry.getService("shared.com", "ns")).labels).toEqual({ from: "local" })
      expect((yield* agg.registry.endpoints("shared.com", "ns")).map((e) => e.clusterId)).toEqual(["local", "east"])

      // The member's changes flow through.
      yield* remote.setEndpoints("shared.com", "ns", [endpoint("shared.com", "10.1.0.2", "east")])
      expect((yield* Queue.take(events)).endpointsChanged).toEqual(["ns/shared.com"])

      // Replacing a member in place: one event from the old content to the new.
      const replacement = yield* makeMockRegistry([mockService("r2.com", "ns")])
      yield* agg.add("east", replacement.registry)
      const replaced = yield* Queue.take(events)
      expect(replaced).toMatchObject({ servicesAdded: ["ns/r2.com"], servicesRemoved: ["ns/r.com"] })
      expect(yield* agg.members).toEqual(["#0", "east"])
      // The old member is no longer followed.
      yield* remote.addService(mockService("ghost.com", "ns"))

      yield* agg.remove("east")
      const removed = yield* Queue.take(events)
      expect(removed).toMatchObject({ servicesRemoved: ["ns/r2.com"] })
      expect((yield* agg.registry.services).map((s) => s.hostname)).toEqual(["shared.com"])
      expect((yield* agg.registry.endpoints("shared.com", "ns")).map((e) => e.clusterId)).toEqual(["local"])
      yield* agg.remove("unknown")
      expect(yield* Queue.size(events)).toBe(0)
    }),
  )

  it.scoped("is synced once the static members and the extra readiness are", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const agg = yield* makeDynamicAggregateRegistry({ ready: Deferred.await(gate) })
      const waiting = yield* Effect.fork(agg.registry.awaitSynced)
      yield* Effect.yieldNow()
      expect(Option.isNone(yield* Fiber.poll(waiting))).toBe(true)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(waiting)
    }),
  )
})
