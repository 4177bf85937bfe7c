import { describe, expect, it } from "@effect/vitest"
import { Effect, Option, Queue } from "effect"
import { makeAggregateRegistry } from "../../../src/services/registry/aggregate.js"
import { makeMockRegistry, mockService } from "../../../src/services/registry/mock.js"
import type { Endpoint } from "../../../src/services/registry/model.js"

const endpoint = (hostname: string, namespace: string, address: string, servicePortName = "http"): Endpoint => ({
  hostname,
  namespace,
  servicePortName,
  address,
  port: 8080,
  labels: {},
  serviceAccount: "",
  locality: "",
  network: "",
  weight: 1,
  healthStatus: "HEALTHY",
  clusterId: "",
})

const http = [{ name: "http", port: 80, protocol: "HTTP" as const }]

describe("Mock registry", () => {
  it.scoped("serves what it is filled with and publishes exact diffs", () =>
    Effect.gen(function* () {
      const mock = yield* makeMockRegistry([mockService("a.ns.svc", "ns", { ports: http })])
      yield* mock.registry.awaitSynced
      const { events } = yield* mock.registry.subscribe
      yield* mock.setEndpoints("a.ns.svc", "ns", [endpoint("a.ns.svc", "ns", "10.0.0.1")])
      const e1 = yield* Queue.take(events)
      expect(e1).toMatchObject({ registry: "Mock", servicesAdded: [], endpointsChanged: ["ns/a.ns.svc"] })
      expect(yield* mock.registry.endpoints("a.ns.svc", "ns", 80)).toHaveLength(1)
      expect(yield* mock.registry.endpoints("a.ns.svc", "ns", 81)).toHaveLength(0)
      yield* mock.addService(mockService("b.ns.svc", "ns"))
      const e2 = yield* Queue.take(events)
      expect(e2.servicesAdded).toEqual(["ns/b.ns.svc"])
      yield* mock.addService(mockService("b.ns.svc", "ns")) // no change, no event
      yield* mock.removeService("a.ns.svc", "ns")
      const e3 = yield* Queue.take(events)
      expect(e3).toMatchObject({ servicesRemoved: ["ns/a.ns.svc"], endpointsChanged: ["ns/a.ns.svc"] })
      expect(Option.isNone(yield* mock.registry.getService("a.ns.svc", "ns"))).toBe(true)
      expect((yield* mock.registry.services).map((s) => s.hostname)).toEqual(["b.ns.svc"])
    }),
  )
})

describe("aggregate registry", () => {
  it.scoped("first registry wins a service, endpoints combine, and child changes flow through", () =>
    Effect.gen(function* () {
      const one = yield* makeMockRegistry(
        [mockService("shared.com", "ns", { ports: http, labels: { from: "one" } })],
        [endpoint("shared.com", "ns", "10.0.0.1")],
      )
      const two = yield* makeMockRegistry(
        [mockService("shared.com", "ns", { ports: http, labels: { from: "two" } }), mockService("only2.com", "ns")],
        [endpoint("shared.com", "ns", "10.0.0.2")],
      )
      const agg = yield* makeAggregateRegistry([one.registry, two.registry])
      yield* agg.awaitSynced
      expect(agg.name).toBe("Aggregate")
      const svc = yield* agg.getService("shared.com", "ns")
      expect(Option.getOrThrow(svc).labels).toEqual({ from: "one" })
      expect((yield* agg.endpoints("shared.com", "ns", 80)).map((e) => e.address)).toEqual(["10.0.0.1", "10.0.0.2"])
      expect((yield* agg.services).map((s) => s.hostname)).toEqual(["only2.com", "shared.com"])

      const { events } = yield* agg.subscribe
      yield* two.setEndpoints("shared.com", "ns", [endpoint("shared.com", "ns", "10.0.0.3")])
      const e1 = yield* Queue.take(events)
      expect(e1.endpointsChanged).toEqual(["ns/shared.com"])
      expect(e1.snapshot.endpoints("shared.com", "ns").map((e) => e.address)).toEqual(["10.0.0.1", "10.0.0.3"])
      // A change hidden by the first registry's service does not produce an event.
      yield* two.addService(mockService("shared.com", "ns", { ports: http, labels: { from: "two-changed" } }))
      yield* one.removeService("shared.com", "ns")
      const e2 = yield* Queue.take(events)
      expect(e2.servicesUpdated).toEqual(["ns/shared.com"])
      expect(e2.snapshot.service("shared.com", "ns")?.labels).toEqual({ from: "two-changed" })
    }),
  )
})
