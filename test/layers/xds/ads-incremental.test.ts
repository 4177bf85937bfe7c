/**
 * The ADS server derives the PushContext of an endpoint-only change from the previous one: after
 * any sequence of endpoint changes (and config and service changes among them) its PushContext and gauges
 * are those a rebuild from the latest input would give.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { makeXdsServer } from "../../../src/layers/xds/ads-server.js"
import { makeAdsClient } from "../../../src/layers/xds-client/ads-client.js"
import type { Endpoint } from "../../../src/services/registry/model.js"
import { clusterName, hostClusterNames } from "../../../src/services/xds/grpcgen/grpc-gen.js"
import {
  makePushContext,
  type PushContext,
  type PushContextInput,
} from "../../../src/services/xds/model/push-context.js"
import { plainToStruct } from "../../../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../../../src/services/xds/protocol/type-urls.js"
import { defaultXdsServerConfig } from "../../../src/services/xds/server.js"
import { ECHO, endpoint, input, service, virtualService, weightedMesh } from "../../fixtures/xds/mesh.js"
import { metricValue } from "../../support/metrics.js"

const config = {
  ...defaultXdsServerConfig,
  host: "127.0.0.1",
  port: 0,
  debounce: { debounceAfter: Duration.millis(5), debounceMax: Duration.millis(100), enableEdsDebounce: true },
  shutdownDuration: Duration.seconds(1),
}
const A = "a.default.svc.cluster.local"
const B = "b.default.svc.cluster.local"
const C = "c.default.svc.cluster.local"
const D = "d.default.svc.cluster.local"
const services = [service(A), service(B), service(C)]
const a1 = endpoint(A, "10.0.0.1", 8080)
const b1 = endpoint(B, "10.0.1.1", 8080)
const mesh = (endpoints: ReadonlyArray<Endpoint>, extra: Partial<PushContextInput> = {}) =>
  input({ services, endpoints, ...extra })

const comparable = (push: PushContext) => ({
  services: push.services,
  endpointsByHost: [...push.endpointsByHost.entries()].sort(([x], [y]) => (x < y ? -1 : 1)),
  virtualServiceByHost: [...push.virtualServiceByHost.entries()].sort(),
  destinationRuleByHost: [...push.destinationRuleByHost.entries()].sort(),
  fingerprints: [A, B, C, D].flatMap((h) =>
    (["service", "endpoints", "vs", "dr"] as const).map((f) => push.fingerprint(f, h)),
  ),
  input: push.input,
})

describe("ADS incremental PushContext", () => {
  it.scopedLive("endpoint changes derive the PushContext; it and the gauges equal a rebuild's", () =>
    Effect.gen(function* () {
      const server = yield* makeXdsServer(config, mesh([a1, b1]))
      const steps: ReadonlyArray<PushContextInput> = [
        // an endpoint added to A
        mesh([a1, endpoint(A, "10.0.0.2", 8080), b1]),
        // B unhealthy, C appears
        mesh([a1, endpoint(A, "10.0.0.2", 8080), { ...b1, healthStatus: "UNHEALTHY" }, endpoint(C, "10.0.2.1", 8080)]),
        // A disappears
        mesh([{ ...b1, healthStatus: "UNHEALTHY" }, endpoint(C, "10.0.2.1", 8080)]),
        // a config change among them: rebuilt
        mesh([{ ...b1, healthStatus: "UNHEALTHY" }, endpoint(C, "10.0.2.1", 8080)], {
          virtualServices: [virtualService("a", { hosts: [A], http: [{ route: [{ destination: { host: B } }] }] })],
        }),
        // and derived again from the rebuilt one
        mesh([a1, endpoint(C, "10.0.2.1", 8080)], {
          virtualServices: [virtualService("a", { hosts: [A], http: [{ route: [{ destination: { host: B } }] }] })],
        }),
        // a service without endpoints appears (a full push counting only the changed hosts) ...
        mesh([a1, endpoint(C, "10.0.2.1", 8080)], { services: [...services, service(D)] }),
        // ... gets an unhealthy endpoint, and C goes with its endpoint
        mesh([a1, { ...endpoint(D, "10.0.3.1", 8080), healthStatus: "UNHEALTHY" }], {
          services: [service(A), service(B), service(D)],
        }),
      ]
      for (const next of steps) {
        const before = (yield* server.pushStats).pushes
        yield* server.update(next)
        yield* Effect.gen(function* () {
          while ((yield* server.pushStats).pushes === before) yield* Effect.sleep("5 millis")
        }).pipe(Effect.timeout("10 seconds"))
        const push = yield* server.pushContext
        expect(comparable(push)).toEqual(comparable(makePushContext(next, config.pushContext, push.version)))
        const unhealthy = next.endpoints.filter((e) => e.healthStatus === "UNHEALTHY").length
        const withoutEndpoints = next.services.filter(
          (s) => !next.endpoints.some((e) => e.hostname === s.hostname),
        ).length
        expect(yield* metricValue("pilot_endpoint_not_ready")).toBe(unhealthy)
        expect(yield* metricValue("pilot_eds_no_instances")).toBe(withoutEndpoints)
      }
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("endpoint changes within one window, prepared as they come, push what a rebuild gives", () =>
    Effect.gen(function* () {
      const windowed = { ...config, debounce: { ...config.debounce, debounceAfter: Duration.millis(200) } }
      const server = yield* makeXdsServer(windowed, mesh([a1, b1]))
      const a2 = endpoint(A, "10.0.0.2", 8080)
      const c1 = endpoint(C, "10.0.2.1", 8080)
      const sequences: ReadonlyArray<ReadonlyArray<PushContextInput>> = [
        // replaced in place, then a host appears
        [mesh([a2, b1]), mesh([a2, b1, c1])],
        // an unchanged snapshot (new objects) between two changes: the chain restarts
        [mesh([a1, b1, c1]), mesh([{ ...a1 }, { ...b1 }, { ...c1 }]), mesh([{ ...a1 }, c1])],
      ]
      for (const steps of sequences) {
        const before = (yield* server.pushStats).pushes
        for (const next of steps) yield* server.update(next)
        yield* Effect.gen(function* () {
          while ((yield* server.pushStats).pushes === before) yield* Effect.sleep("5 millis")
        }).pipe(Effect.timeout("10 seconds"))
        expect((yield* server.pushStats).pushes).toBe(before + 1)
        const last = steps.at(-1)!
        const push = yield* server.pushContext
        expect(comparable(push)).toEqual(comparable(makePushContext(last, config.pushContext, push.version)))
      }
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("a watched endpoint change is encoded when it arrives; its push encodes nothing more", () =>
    Effect.gen(function* () {
      const windowed = { ...config, debounce: { ...config.debounce, debounceAfter: Duration.millis(300) } }
      const before = weightedMesh({ address: "10.0.0.1", port: 8080 }, { address: "10.0.0.2", port: 8080 })
      const moved = weightedMesh({ address: "10.0.0.3", port: 8080 }, { address: "10.0.0.4", port: 8080 })
      const server = yield* makeXdsServer(windowed, before)
      // unwatched: nothing is encoded ahead
      const unwatched = weightedMesh({ address: "10.0.0.5", port: 8080 }, { address: "10.0.0.2", port: 8080 })
      yield* server.update(unwatched)
      expect((yield* server.cacheStats).misses).toBe(0)
      const client = yield* makeAdsClient({
        address: `127.0.0.1:${server.port}`,
        mode: "delta",
        node: {
          id: "sidecar~10.0.0.9~watcher.default~default.svc.cluster.local",
          metadata: plainToStruct({ GENERATOR: "grpc" }),
        },
      })
      yield* client.subscribe(TypeUrl.Endpoint, [clusterName(ECHO, 80, "v1")])
      const holds = (address: string) =>
        client.waitFor(
          (s) =>
            [...(s.types.get(TypeUrl.Endpoint)?.resources.values() ?? [])].some((r) =>
              JSON.stringify(r).includes(address),
            ),
          "10 seconds",
        )
      yield* client.waitFor((s) => (s.types.get(TypeUrl.Endpoint)?.resources.size ?? 0) === 1, "10 seconds")
      const pushes = (yield* server.pushStats).pushes
      const encoded = (yield* server.cacheStats).misses
      yield* server.update(moved)
      // within the window: the watched cluster of the changed host is encoded (not the host's
      // other clusters, which nobody asked for); nothing is pushed yet
      expect(hostClusterNames(makePushContext(moved), ECHO)).toHaveLength(3)
      expect((yield* server.cacheStats).misses - encoded).toBe(1)
      expect((yield* server.pushStats).pushes).toBe(pushes)
      const looked = (yield* server.cacheStats).hits
      yield* holds("10.0.0.3")
      expect((yield* server.pushStats).pushes).toBe(pushes + 1)
      // the push takes the cluster as looked up in the window: no encode, no cache lookup
      expect((yield* server.cacheStats).misses - encoded).toBe(1)
      expect((yield* server.cacheStats).hits).toBe(looked)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})
