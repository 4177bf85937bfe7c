import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { makeXdsServer } from "../../../src/layers/xds/ads-server.js"
import { makeAdsClient } from "../../../src/layers/xds-client/ads-client.js"
import { clusterName } from "../../../src/services/xds/grpcgen/grpc-gen.js"
import { plainToStruct } from "../../../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../../../src/services/xds/protocol/type-urls.js"
import { defaultXdsServerConfig } from "../../../src/services/xds/server.js"
import { ECHO, weightedMesh } from "../../fixtures/xds/mesh.js"
import { poll, metricValue as registryValue } from "../../support/metrics.js"

/** -1 when the metric is not registered at all, to tell that from a registered zero. */
const metricValue = (name: string, labels: Record<string, string> = {}) => registryValue(name, labels, -1)

const config = {
  ...defaultXdsServerConfig,
  host: "127.0.0.1",
  port: 0,
  debounce: { debounceAfter: Duration.millis(10), debounceMax: Duration.millis(200), enableEdsDebounce: true },
  shutdownDuration: Duration.seconds(1),
}
const mesh = weightedMesh({ address: "10.0.0.1", port: 8080 }, { address: "10.0.0.2", port: 8080 })
const moved = weightedMesh({ address: "10.0.0.3", port: 8080 }, { address: "10.0.0.4", port: 8080 })
const WAIT = "10 seconds"
const EDS = [clusterName(ECHO, 80, "v1"), clusterName(ECHO, 80, "v2")]

const client = (port: number, id: string) =>
  makeAdsClient({
    address: `127.0.0.1:${port}`,
    mode: "sotw",
    node: {
      id: `sidecar~10.0.0.9~${id}.default~default.svc.cluster.local`,
      metadata: plainToStruct({ GENERATOR: "grpc" }),
    },
  })

const heldEds = (c: Effect.Effect.Success<ReturnType<typeof client>>) =>
  c.waitFor((s) => (s.types.get(TypeUrl.Endpoint)?.resources.size ?? 0) === 2, WAIT)

describe("ADS server cache metrics and index clearing", () => {
  it.scopedLive("PILOT_XDS_CACHE_STATS: hits and misses in xds_cache_reads, entries per type in xds_cache_size", () =>
    Effect.gen(function* () {
      const server = yield* makeXdsServer({ ...config, cache: { ...config.cache, stats: true } }, mesh)
      for (const id of ["a", "b"]) {
        const c = yield* client(server.port, id)
        yield* c.subscribe(TypeUrl.Endpoint, EDS)
        yield* heldEds(c)
      }
      expect(yield* metricValue("xds_cache_reads", { type: "miss" })).toBe(2)
      expect(yield* metricValue("xds_cache_reads", { type: "hit" })).toBe(2)
      expect(yield* metricValue("xds_cache_size", { type: "eds" })).toBe(2)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("without PILOT_XDS_CACHE_STATS no reads are counted", () =>
    Effect.gen(function* () {
      const server = yield* makeXdsServer(config, mesh)
      const c = yield* client(server.port, "a")
      yield* c.subscribe(TypeUrl.Endpoint, EDS)
      yield* heldEds(c)
      expect(yield* metricValue("xds_cache_reads")).toBe(0)
      expect(yield* metricValue("xds_cache_size", { type: "eds" })).toBe(2)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("PILOT_XDS_CACHE_INDEX_CLEAR_INTERVAL drops the endpoints' superseded versions after a change", () =>
    Effect.gen(function* () {
      const server = yield* makeXdsServer(
        { ...config, cache: { ...config.cache, indexClearInterval: Duration.millis(50) } },
        mesh,
      )
      const c = yield* client(server.port, "a")
      yield* c.subscribe(TypeUrl.Endpoint, EDS)
      yield* heldEds(c)
      yield* server.update(moved)
      yield* c.waitFor(
        (s) => JSON.stringify([...(s.types.get(TypeUrl.Endpoint)?.resources.values() ?? [])]).includes("10.0.0.3"),
        WAIT,
      )
      yield* poll(metricValue("xds_cache_evictions", { type: "clear" }), (n) => n === 2, WAIT)
      expect(yield* metricValue("xds_cache_size", { type: "eds" })).toBe(2)
      expect((yield* server.cacheStats).evictions).toBe(2)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})
