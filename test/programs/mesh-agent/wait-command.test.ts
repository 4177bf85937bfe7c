/** `mesh-agent wait`: retries on the period until ready, gives up at the timeout (TestClock). */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Ref, TestClock } from "effect"
import { NotReady, probeOnce, waitUntilReady } from "../../../src/programs/mesh-agent/wait-command.js"

const settings = { url: "unused", periodMillis: 500, requestTimeoutMillis: 500, timeoutSeconds: 60 }

describe("waitUntilReady", () => {
  it.effect("succeeds on the attempt that finds the proxy ready", () =>
    Effect.gen(function* () {
      const attempts = yield* Ref.make(0)
      const probe = Ref.updateAndGet(attempts, (n) => n + 1).pipe(
        Effect.flatMap((n) => (n < 4 ? Effect.fail(new NotReady({ message: "HTTP status code 503" })) : Effect.void)),
      )
      const fiber = yield* Effect.fork(waitUntilReady(settings, probe))
      yield* TestClock.adjust("1499 millis")
      expect(yield* Ref.get(attempts)).toBe(3)
      yield* TestClock.adjust("1 millis")
      expect(Exit.isSuccess(yield* Fiber.await(fiber))).toBe(true)
      expect(yield* Ref.get(attempts)).toBe(4)
    }),
  )

  it.effect("fails after the timeout when the proxy never becomes ready", () =>
    Effect.gen(function* () {
      const probe = Effect.fail(new NotReady({ message: "connection refused" }))
      const fiber = yield* Effect.fork(waitUntilReady({ ...settings, timeoutSeconds: 2 }, probe))
      yield* TestClock.adjust("2 seconds")
      const exit = yield* Fiber.await(fiber)
      expect(exit).toEqual(Exit.fail(new NotReady({ message: "timeout waiting for the proxy to become ready (2s)" })))
    }),
  )
})

describe("probeOnce", () => {
  it.live("is ready only on HTTP 200", () =>
    Effect.gen(function* () {
      let status = 503
      const server = createServer((_, res) => {
        res.statusCode = status
        res.end()
      })
      yield* Effect.async<void>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.void))
      })
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/healthz/ready`
      const notReady = yield* Effect.flip(probeOnce(url, 500))
      expect(notReady.message).toBe("HTTP status code 503")
      status = 200
      yield* probeOnce(url, 500)
      yield* Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
      const refused = yield* Effect.flip(probeOnce(url, 500))
      expect(refused.message).toContain("ECONNREFUSED")
    }),
  )
})
