/**
 * The agent's xDS proxy when the discovery server refuses the stream (issue 16 item 8): a fake
 * upstream ADS server answers every stream with PERMISSION_DENIED; each downstream stream ends
 * with that status and its details (the application sees why), the refusal is logged once for
 * all the application's retries, and again once the cause changes.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect, Layer, Logger } from "effect"
import { makeXdsProxy } from "../../../../src/layers/agent/xds-proxy/xds-proxy.js"
import { layer as metricsLayer } from "../../../../src/layers/metrics.js"

const PATH = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources"
const identity = (b: Buffer) => b

/** A fake discovery server refusing every ADS stream with the current `refusal`. */
const fakeUpstream = Effect.acquireRelease(
  Effect.async<{
    port: number
    server: grpc.Server
    refusal: { code: grpc.status; details: string }
    calls: () => number
  }>((resume) => {
    let calls = 0
    const state = {
      refusal: { code: grpc.status.PERMISSION_DENIED, details: "node id sidecar~x~y.z~z.svc is not allowed" },
    }
    const server = new grpc.Server()
    const method = {
      path: PATH,
      requestStream: true,
      responseStream: true,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    }
    server.addService({ StreamAggregatedResources: method } as unknown as grpc.ServiceDefinition, {
      StreamAggregatedResources: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
        calls += 1
        call.on("data", () => undefined)
        call.emit("error", { ...state.refusal })
      },
    })
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, port) => {
      if (error) resume(Effect.die(error))
      else
        resume(
          Effect.succeed({
            port,
            server,
            get refusal() {
              return state.refusal
            },
            set refusal(r) {
              state.refusal = r
            },
            calls: () => calls,
          }),
        )
    })
  }),
  ({ server }) => Effect.sync(() => server.forceShutdown()),
)

/** One downstream ADS stream through the proxy's socket: resolves with the status it ended with. */
const downstreamCall = (socketPath: string) =>
  Effect.async<grpc.StatusObject>((resume) => {
    const client = new grpc.Client(`unix://${socketPath}`, grpc.credentials.createInsecure())
    const call = client.makeBidiStreamRequest(PATH, identity, identity)
    call.on("data", () => undefined)
    call.on("error", () => undefined)
    call.on("status", (s: grpc.StatusObject) => {
      client.close()
      resume(Effect.succeed(s))
    })
    call.write(Buffer.alloc(0))
    return Effect.sync(() => {
      call.cancel()
      client.close()
    })
  })

describe("xDS proxy, upstream refusal", () => {
  it.scopedLive("ends the downstream with the refusal and logs it once per cause", () => {
    const lines: Array<string> = []
    const capture = Logger.make(({ logLevel, message }) => {
      lines.push(`${logLevel.label} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
    })
    return Effect.gen(function* () {
      const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "mesh-xdsproxy-refusal-")))
      yield* Effect.addFinalizer(() => Effect.promise(() => rm(dir, { recursive: true, force: true })))
      const upstream = yield* fakeUpstream
      const socketPath = join(dir, "XDS")
      yield* makeXdsProxy({
        socketPath,
        upstream: `127.0.0.1:${upstream.port}`,
        retry: { base: Duration.millis(10), max: Duration.millis(50) },
      })

      // the application retries 6 times: every stream ends PERMISSION_DENIED with the details
      const N = 6
      for (let i = 0; i < N; i++) {
        const status = yield* downstreamCall(socketPath).pipe(Effect.timeout("10 seconds"))
        expect(status.code).toBe(grpc.status.PERMISSION_DENIED)
        expect(status.details).toBe("node id sidecar~x~y.z~z.svc is not allowed")
      }
      // the proxy did not retry on its own: one upstream stream per downstream stream
      expect(upstream.calls()).toBe(N)
      const warnings = () => lines.filter((l) => l.startsWith("WARN") && l.includes("refused"))
      expect(warnings()).toHaveLength(1)
      expect(warnings()[0]).toContain("PERMISSION_DENIED: node id sidecar~x~y.z~z.svc is not allowed")

      // a different cause is logged again, once
      upstream.refusal = { code: grpc.status.UNAUTHENTICATED, details: "token expired" }
      for (let i = 0; i < 3; i++) {
        const status = yield* downstreamCall(socketPath).pipe(Effect.timeout("10 seconds"))
        expect(status.code).toBe(grpc.status.UNAUTHENTICATED)
        expect(status.details).toBe("token expired")
      }
      expect(warnings()).toHaveLength(2)
      expect(warnings()[1]).toContain("UNAUTHENTICATED: token expired")
    }).pipe(Effect.provide(Layer.merge(metricsLayer("test"), Logger.replace(Logger.defaultLogger, capture))))
  })
})
