/** The gRPC listener both the plaintext ADS listener and the TLS listener are made of. */
import * as net from "node:net"
import { describe, expect, it } from "@effect/vitest"
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect, Exit, Scope } from "effect"
import { makeGrpcListener } from "../../../src/layers/grpc/grpc-listener.js"

const settings = (port: number, bound: Array<number> = []) => ({
  target: `127.0.0.1:${port}`,
  credentials: grpc.ServerCredentials.createInsecure(),
  options: {},
  shutdownTimeout: Duration.seconds(1),
  bindError: (error: Error) => ({ _tag: "BindFailed" as const, message: error.message }),
  onBound: (port: number) => Effect.sync(() => bound.push(port)),
})

/** Whether a plain TCP server can take the port (the listener let it go). */
const portIsFree = (port: number) =>
  Effect.async<boolean>((resume) => {
    const server = net.createServer()
    server.once("error", () => resume(Effect.succeed(false)))
    server.listen(port, "127.0.0.1", () => server.close(() => resume(Effect.succeed(true))))
  })

describe("gRPC listener", () => {
  it.live("binds once, and lets the port go when its scope closes", () =>
    Effect.gen(function* () {
      const bound: Array<number> = []
      const scope = yield* Scope.make()
      const listener = yield* Scope.extend(makeGrpcListener(settings(0, bound)), scope)
      expect(yield* listener.port).toBeUndefined()
      const port = yield* listener.start
      expect(yield* listener.start).toBe(port)
      expect(yield* listener.port).toBe(port)
      expect(bound).toEqual([port])
      expect(yield* portIsFree(port)).toBe(false)
      yield* Scope.close(scope, Exit.void)
      expect(yield* portIsFree(port)).toBe(true)
    }),
  )

  it.live("fails start with the listener's own bind error when the address is taken", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const first = yield* makeGrpcListener(settings(0))
        const port = yield* first.start
        const second = yield* makeGrpcListener(settings(port))
        const error = yield* Effect.flip(second.start)
        expect(error._tag).toBe("BindFailed")
        expect(error.message).toMatch(/EADDRINUSE|address already in use/i)
        expect(yield* second.port).toBeUndefined()
      }),
    ),
  )
})
