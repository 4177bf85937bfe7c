/**
 * The orchestrator client against the in-process API server: CRUD with optimistic concurrency,
 * merge patches, API errors as typed OrchestratorErrors (status, reason, Retry-After), a server
 * that cannot be reached, a kubeconfig that cannot be loaded, and QPS throttling.
 */
import { writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Fiber, ManagedRuntime, TestClock, TestContext } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeOrchestratorClient } from "../../../src/layers/orchestrator/client.js"
import { makeThrottle } from "../../../src/layers/orchestrator/throttle.js"
import { OrchestratorClient, type OrchestratorError } from "../../../src/services/orchestrator/client.js"
import type { OrchConfigMap } from "../../../src/services/orchestrator/objects.js"
import { Resources } from "../../../src/services/orchestrator/resources.js"
import { type Orchestrator, startOrchestrator } from "../../support/orchestrator/index.js"
import { orchestratorLayer } from "../../support/orchestrator/layers.js"

let server: Orchestrator
let runtime: ManagedRuntime.ManagedRuntime<OrchestratorClient, never>
beforeAll(async () => {
  server = await startOrchestrator({ token: "secret-token" })
  runtime = ManagedRuntime.make(orchestratorLayer(server)) as ManagedRuntime.ManagedRuntime<OrchestratorClient, never>
})
afterAll(async () => {
  await runtime.dispose()
  await server.close()
})

const run = <A, E>(effect: Effect.Effect<A, E, OrchestratorClient>) => runtime.runPromise(effect)
const failure = async (effect: Effect.Effect<unknown, OrchestratorError, OrchestratorClient>) => {
  const exit = await runtime.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  if (error === undefined) throw new Error(`unexpected cause ${exit.cause._tag}`)
  return error
}

describe("orchestrator client", () => {
  it("creates, reads, replaces with concurrency control, patches and deletes", async () => {
    const made = await run(
      Effect.flatMap(OrchestratorClient, (c) =>
        c.create<OrchConfigMap>(Resources.configMaps, {
          metadata: { name: "crud", namespace: "default" },
          data: { a: "1" },
        }),
      ),
    )
    expect(made.metadata.resourceVersion).toBeDefined()
    const read = await run(
      Effect.flatMap(OrchestratorClient, (c) => c.get<OrchConfigMap>(Resources.configMaps, "default", "crud")),
    )
    expect(read.data).toEqual({ a: "1" })
    const replaced = await run(
      Effect.flatMap(OrchestratorClient, (c) =>
        c.replace<OrchConfigMap>(Resources.configMaps, { ...read, data: { a: "2" } }),
      ),
    )
    expect(replaced.data).toEqual({ a: "2" })
    // The old resourceVersion is stale now.
    const conflict = await failure(
      Effect.flatMap(OrchestratorClient, (c) =>
        c.replace<OrchConfigMap>(Resources.configMaps, { ...read, data: { a: "3" } }),
      ),
    )
    expect(conflict.status).toBe(409)
    expect(conflict.conflict).toBe(true)
    expect(conflict.reason).toBe("Conflict")
    const patched = await run(
      Effect.flatMap(OrchestratorClient, (c) =>
        c.mergePatch<OrchConfigMap>(Resources.configMaps, "default", "crud", { data: { b: "x" } }),
      ),
    )
    expect(patched.data).toEqual({ a: "2", b: "x" })
    await run(Effect.flatMap(OrchestratorClient, (c) => c.remove(Resources.configMaps, "default", "crud")))
    const gone = await failure(
      Effect.flatMap(OrchestratorClient, (c) => c.get(Resources.configMaps, "default", "crud")),
    )
    expect(gone.notFound).toBe(true)
    expect(gone.message).toContain("/api/v1/namespaces/default/configmaps/crud")
  })

  it("reports 429 with Retry-After and a server that is down", async () => {
    server.failNext({ verb: "get", path: /configmaps\/busy/, count: 1, status: 429, retryAfterSeconds: 7 })
    const busy = await failure(
      Effect.flatMap(OrchestratorClient, (c) => c.get(Resources.configMaps, "default", "busy")),
    )
    expect(busy.status).toBe(429)
    expect(busy.retryAfterSeconds).toBe(7)
    await server.down()
    try {
      const down = await failure(Effect.flatMap(OrchestratorClient, (c) => c.get(Resources.configMaps, "default", "x")))
      expect(down.status).toBe(0)
      // A kept-alive connection is reset; a new one is refused.
      expect(["ECONNRESET", "ECONNREFUSED"]).toContain(down.reason)
      const again = await failure(
        Effect.flatMap(OrchestratorClient, (c) => c.get(Resources.configMaps, "default", "x")),
      )
      expect(again.reason).toBe("ECONNREFUSED")
    } finally {
      await server.up()
    }
  })

  it("refuses a kubeconfig it cannot load, naming the file", async () => {
    const file = join(tmpdir(), `bad-kubeconfig-${process.pid}.yaml`)
    writeFileSync(file, "clusters: [")
    const exit = await Effect.runPromiseExit(
      Effect.scoped(makeOrchestratorClient({ source: { _tag: "file", path: file }, clusterId: "c", qps: 0, burst: 0 })),
    )
    expect(Exit.isFailure(exit)).toBe(true)
    expect(String(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error.message : "")).toContain(file)
  })

  it("throttles to the burst, then the QPS", async () => {
    await Effect.runPromise(
      Effect.gen(function* () {
        const throttle = yield* makeThrottle(10, 3)
        let sent = 0
        const fiber = yield* Effect.fork(
          Effect.forEach(Array.from({ length: 6 }), () => Effect.tap(throttle.take, () => void sent++), {
            discard: true,
          }),
        )
        yield* TestClock.adjust("1 millis")
        expect(sent).toBe(3)
        yield* TestClock.adjust("100 millis")
        expect(sent).toBe(4)
        yield* TestClock.adjust("200 millis")
        expect(sent).toBe(6)
        yield* Fiber.join(fiber)
      }).pipe(Effect.provide(TestContext.TestContext)),
    )
  })
})
