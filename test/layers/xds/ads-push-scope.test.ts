import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Schedule } from "effect"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { makeXdsServer } from "../../../src/layers/xds/ads-server.js"
import { makeAdsClient } from "../../../src/layers/xds-client/ads-client.js"
import { clusterName } from "../../../src/services/xds/grpcgen/grpc-gen.js"
import { plainToStruct } from "../../../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../../../src/services/xds/protocol/type-urls.js"
import { defaultXdsServerConfig } from "../../../src/services/xds/server.js"
import { endpoint, input, service } from "../../fixtures/xds/mesh.js"

const config = {
  ...defaultXdsServerConfig,
  host: "127.0.0.1",
  port: 0,
  debounce: { debounceAfter: Duration.millis(10), debounceMax: Duration.millis(200), enableEdsDebounce: true },
  shutdownDuration: Duration.seconds(1),
}
const A = "a.default.svc.cluster.local"
const B = "b.default.svc.cluster.local"
const mesh = (a: string, b: string) =>
  input({ services: [service(A), service(B)], endpoints: [endpoint(A, a, 8080), endpoint(B, b, 8080)] })
const WAIT = "10 seconds"

describe("ADS push scope", () => {
  it.scopedLive("an endpoint change reaches only the clients watching that host's clusters", () =>
    Effect.gen(function* () {
      const server = yield* makeXdsServer(config, mesh("10.0.0.1", "10.0.1.1"))
      const responses = { a: 0, b: 0 }
      const watcher = (id: "a" | "b", host: string) =>
        Effect.gen(function* () {
          const c = yield* makeAdsClient({
            address: `127.0.0.1:${server.port}`,
            mode: "sotw",
            node: {
              id: `sidecar~10.0.0.9~${id}.default~default.svc.cluster.local`,
              metadata: plainToStruct({ GENERATOR: "grpc" }),
            },
            onResponse: (event) => {
              if (event.typeUrl === TypeUrl.Endpoint) responses[id]++
            },
          })
          yield* c.subscribe(TypeUrl.Endpoint, [clusterName(host, 80, "")])
          return c
        })
      const a = yield* watcher("a", A)
      const b = yield* watcher("b", B)
      const holds = (c: typeof a, address: string) =>
        c.waitFor(
          (s) => JSON.stringify([...(s.types.get(TypeUrl.Endpoint)?.resources.values() ?? [])]).includes(address),
          WAIT,
        )
      yield* holds(a, "10.0.0.1")
      yield* holds(b, "10.0.1.1")
      yield* server.update(mesh("10.0.0.2", "10.0.1.1"))
      yield* holds(a, "10.0.0.2")
      // B's change is pushed after A's: had A's change reached b, b would have counted it first.
      yield* server.update(mesh("10.0.0.2", "10.0.1.2"))
      yield* holds(b, "10.0.1.2")
      expect(responses).toEqual({ a: 2, b: 2 })
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("a client that moves its EDS watch gets the new host's changes and no longer the old one's", () =>
    Effect.gen(function* () {
      const server = yield* makeXdsServer(config, mesh("10.0.0.1", "10.0.1.1"))
      let pushes = 0
      const c = yield* makeAdsClient({
        address: `127.0.0.1:${server.port}`,
        mode: "delta",
        node: {
          id: "sidecar~10.0.0.9~mover.default~default.svc.cluster.local",
          metadata: plainToStruct({ GENERATOR: "grpc" }),
        },
        onResponse: (event) => {
          if (event.typeUrl === TypeUrl.Endpoint) pushes++
        },
      })
      const holds = (address: string) =>
        c.waitFor(
          (s) => JSON.stringify([...(s.types.get(TypeUrl.Endpoint)?.resources.values() ?? [])]).includes(address),
          WAIT,
        )
      yield* c.subscribe(TypeUrl.Endpoint, [clusterName(A, 80, "")])
      yield* holds("10.0.0.1")
      yield* c.unsubscribe(TypeUrl.Endpoint, [clusterName(A, 80, "")])
      yield* c.subscribe(TypeUrl.Endpoint, [clusterName(B, 80, "")])
      yield* holds("10.0.1.1")
      const before = pushes
      // A's change is pushed (to nobody), then B's: only B's reaches the client.
      const pushed = (yield* server.pushStats).pushes
      yield* server.update(mesh("10.0.0.2", "10.0.1.1"))
      yield* server.pushStats.pipe(
        Effect.repeat({ until: (s) => s.pushes > pushed, schedule: Schedule.spaced("5 millis") }),
        Effect.timeout(WAIT),
      )
      yield* server.update(mesh("10.0.0.2", "10.0.1.2"))
      yield* holds("10.0.1.2")
      expect(pushes - before).toBe(1)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})
