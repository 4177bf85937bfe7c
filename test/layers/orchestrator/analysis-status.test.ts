/**
 * The analysis status writer against the in-process orchestrator API server, with the real
 * orchestrator config store: an invalid VirtualService and one routing to an undefined subset
 * get their messages in `status.validationMessages`, a valid one gets none; fixing an object
 * clears its messages; a quiet round writes nothing.
 */
import { Effect, Fiber, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeOrchestratorConfigStore } from "../../../src/layers/config-store/orchestrator-store.js"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { runAnalysisStatus } from "../../../src/layers/orchestrator/analysis-status.js"
import type { AnalysisMessage } from "../../../src/services/analysis/analysis-status.js"
import { ConfigStore } from "../../../src/services/config-store/config-store.js"
import { type Orchestrator, startOrchestrator } from "../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../support/orchestrator/layers.js"

const API = "networking.mesh.io/v1"
let server: Orchestrator
beforeAll(async () => {
  server = await startOrchestrator({
    customResources: [
      { group: "networking.mesh.io", versions: ["v1"], kind: "VirtualService", plural: "virtualservices" },
      { group: "networking.mesh.io", versions: ["v1"], kind: "DestinationRule", plural: "destinationrules" },
    ],
  })
})
afterAll(() => server.close())

const putVs = (name: string, http: unknown) =>
  server.put({
    apiVersion: API,
    kind: "VirtualService",
    metadata: { name, namespace: "default" },
    spec: { hosts: ["reviews"], http },
  })
const route = (subset?: string, weights?: [number, number]) => [
  {
    route: weights
      ? [
          { destination: { host: "reviews" }, weight: weights[0] },
          { destination: { host: "ratings" }, weight: weights[1] },
        ]
      : [{ destination: { host: "reviews", ...(subset ? { subset } : {}) } }],
  },
]
const messagesOf = (name: string) =>
  (server.get(API, "VirtualService", "default", name) as { status?: { validationMessages?: Array<AnalysisMessage> } })
    ?.status?.validationMessages

const realSleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))
const eventually = (check: () => boolean, within = 8000) =>
  Effect.gen(function* () {
    const deadline = Date.now() + within
    while (!check()) {
      if (Date.now() > deadline) return yield* Effect.die(new Error("condition not met in time"))
      yield* realSleep(20)
    }
  })

describe("analysis status writer", () => {
  it("writes messages of invalid and mis-referencing objects, clears them when fixed", async () => {
    putVs("good", route())
    putVs("invalid", route(undefined, [90, 20]))
    putVs("dangling", route("v9"))
    await Effect.runPromise(
      Effect.gen(function* () {
        const { store, watched } = yield* makeOrchestratorConfigStore()
        const fiber = yield* Effect.fork(
          runAnalysisStatus({ interval: "100 millis", watched }).pipe(Effect.provideService(ConfigStore, store)),
        )
        yield* eventually(() => messagesOf("invalid") !== undefined && messagesOf("dangling") !== undefined)
        expect(messagesOf("invalid")?.map((m) => [m.level, m.type.name])).toEqual([["Error", "SchemaValidationError"]])
        expect(messagesOf("dangling")?.map((m) => [m.level, m.type.name])).toEqual([
          ["Warning", "ReferencedResourceNotFound"],
        ])
        expect(messagesOf("dangling")?.[0]?.description).toContain('subset "v9"')
        expect(messagesOf("good")).toBeUndefined()

        // Quiet rounds write nothing.
        const patches = () => server.requestCount({ verb: "patch" })
        const before = patches()
        yield* realSleep(400)
        expect(patches()).toBe(before)

        putVs("invalid", route(undefined, [80, 20]))
        yield* eventually(() => messagesOf("invalid") === undefined)
        yield* Fiber.interrupt(fiber)
      }).pipe(Effect.provide(Layer.merge(orchestratorLayer(server), metricsLayer("test"))), Effect.scoped),
    )
  })
})
