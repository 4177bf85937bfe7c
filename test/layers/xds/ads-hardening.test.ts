/**
 * What an unauthenticated ADS caller must not be able to do to the server (issue 16): grow it
 * without limit through a stream that never reads, stall every push with a few such streams,
 * make metric labels of its strings, or be served with a missing or malformed node id.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Logger } from "effect"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { makeXdsServer } from "../../../src/layers/xds/ads-server.js"
import { makeAdsClient } from "../../../src/layers/xds-client/ads-client.js"
import { Metrics } from "../../../src/services/metrics/metrics.js"
import { plainToStruct } from "../../../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../../../src/services/xds/protocol/type-urls.js"
import { defaultXdsServerConfig, type XdsServerConfig } from "../../../src/services/xds/server.js"
import { service, weightedMesh } from "../../fixtures/xds/mesh.js"
import { metricValue, poll } from "../../support/metrics.js"
import { openRawStream, type RawOutcome, rawSession } from "../../support/raw-ads.js"

const config: XdsServerConfig = {
  ...defaultXdsServerConfig,
  host: "127.0.0.1",
  port: 0,
  debounce: { debounceAfter: Duration.millis(10), debounceMax: Duration.millis(200), enableEdsDebounce: true },
  shutdownDuration: Duration.seconds(1),
}
const mesh = weightedMesh({ address: "10.0.0.1", port: 8080 }, { address: "10.0.0.2", port: 8080 })
const nodeOf = (name: string) => ({
  id: `sidecar~10.0.0.9~${name}.default~default.svc.cluster.local`,
  metadata: plainToStruct({ GENERATOR: "grpc" }),
})
const MB = 1024 * 1024
const WAIT = "20 seconds"

/** Sessions closed when the test's scope closes. */
const session = (port: number, reads: boolean) =>
  Effect.acquireRelease(
    Effect.sync(() => rawSession(port, { reads })),
    (s) => Effect.sync(() => s.destroy()),
  )

const outcome = (closed: Promise<RawOutcome>, within: Duration.DurationInput = WAIT) =>
  Effect.promise(() => closed).pipe(Effect.timeout(within))

describe("ADS server: a peer that never reads", () => {
  it.scopedLive("cannot make the server read its requests without limit (the call is paused)", () =>
    Effect.gen(function* () {
      // No send timeout: the stream stays stuck for as long as the test looks at it.
      const server = yield* makeXdsServer({ ...config, sendTimeout: Duration.zero }, mesh)
      const raw = openRawStream(yield* session(server.port, false), "StreamAggregatedResources")
      // 1 MB of names each time, every name within the length bound (name-budget.ts).
      const names = Array.from({ length: 1024 }, (_, i) => `${"x".repeat(1000)}-${i}`)
      // The first request is answered; its answer can never be sent, so the stream's fiber waits.
      let flushed = 0
      const sending = Effect.promise(async () => {
        for (let i = 0; i < 64; i++) {
          if (!(await raw.send({ node: nodeOf("flood"), type_url: TypeUrl.Cluster, resource_names: names }))) return
          flushed++
        }
      })
      // Reading everything (the unbounded inbox) flushes all 64 MB in well under the wait.
      const all = yield* sending.pipe(Effect.timeout("4 seconds"), Effect.option)
      expect(all._tag).toBe("None")
      // What HTTP/2 and grpc-js buffer before the pause holds: a few requests, not the flood.
      expect(flushed).toBeLessThan(24)
      expect(raw.stream.closed).toBe(false)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive(
    "never-reading streams holding every push slot are closed after the send timeout; the others get the push",
    () =>
      Effect.gen(function* () {
        // The default PILOT_XDS_SEND_TIMEOUT (5s); two push slots, three streams that never read.
        expect(Duration.toMillis(config.sendTimeout!)).toBe(5000)
        const server = yield* makeXdsServer({ ...config, pushThrottle: 2 }, mesh)
        const stuck = []
        for (let i = 0; i < 3; i++) {
          const raw = openRawStream(yield* session(server.port, false), "StreamAggregatedResources")
          yield* Effect.promise(() => raw.send({ node: nodeOf(`stuck-${i}`), type_url: TypeUrl.Cluster }))
          stuck.push(raw)
        }
        const good = yield* makeAdsClient({ address: `127.0.0.1:${server.port}`, mode: "sotw", node: nodeOf("good") })
        yield* good.subscribe(TypeUrl.Cluster)
        yield* good.waitFor((s) => (s.types.get(TypeUrl.Cluster)?.resources.size ?? 0) === 3, WAIT)
        yield* poll(server.connections, (cs) => cs.length === 4, WAIT)
        // A change for everyone: the stuck streams take both slots first or not, the push goes on.
        yield* server.update({ ...mesh, services: [...mesh.services, service("new.default.svc.cluster.local")] })
        yield* good.waitFor((s) => (s.types.get(TypeUrl.Cluster)?.resources.size ?? 0) === 4, WAIT)
        // The stuck streams are reset (their buffered responses freed), counted and forgotten.
        for (const raw of stuck) expect((yield* outcome(raw.closed)).rstCode).toBe(8) // NGHTTP2_CANCEL
        expect(yield* metricValue("pilot_xds_write_timeout")).toBe(3)
        const left = yield* poll(server.connections, (cs) => cs.length === 1, WAIT)
        expect(left[0]!.nodeId).toBe(nodeOf("good").id)
        // and the next push reaches the well-behaved client without waiting for anyone
        yield* server.update(mesh)
        yield* good.waitFor((s) => (s.types.get(TypeUrl.Cluster)?.resources.size ?? 0) === 3, "3 seconds")
      }).pipe(Effect.provide(metricsLayer("test"))),
  )
})

describe("ADS server: node ids and type URLs", () => {
  const refused = (node: object | undefined) =>
    Effect.gen(function* () {
      const server = yield* makeXdsServer(config, mesh)
      const raw = openRawStream(yield* session(server.port, true), "StreamAggregatedResources")
      yield* Effect.promise(() => raw.send({ ...(node === undefined ? {} : { node }), type_url: TypeUrl.Cluster }))
      return yield* outcome(raw.closed)
    })

  it.scopedLive("a first request without a node or with a malformed node id is refused with INVALID_ARGUMENT", () =>
    Effect.gen(function* () {
      const cases: Array<[object | undefined, string]> = [
        [undefined, "missing node information"],
        [{ id: "" }, "missing node information"],
        [{ id: "~~~" }, "invalid node type"],
        [{ id: "proxy-1" }, "missing parts in the service node"],
        [{ id: "test~10.0.0.9~a.default~default.svc.cluster.local" }, "invalid node type"],
        [{ id: "sidecar~not-an-ip~a.default~default.svc.cluster.local" }, "invalid IP address"],
        [{ id: `sidecar~10.0.0.9~${"x".repeat(MB)}.default~d` }, "at most 1024 are accepted"],
      ]
      for (const [node, message] of cases) {
        const result = yield* refused(node)
        expect(result.grpcStatus, message).toBe(3) // INVALID_ARGUMENT
        expect(result.message).toContain(message)
        expect(result.message.length).toBeLessThan(300)
        expect(result.bytes).toBe(0)
      }
      // INSTANCE_IPS metadata stands in for the id's address, as in the reference
      const server = yield* makeXdsServer(config, mesh)
      const c = yield* makeAdsClient({
        address: `127.0.0.1:${server.port}`,
        mode: "delta",
        node: {
          id: "router~-~gw.default~default.svc.cluster.local",
          metadata: plainToStruct({ INSTANCE_IPS: "10.1.1.1" }),
        },
      })
      yield* c.subscribe(TypeUrl.Cluster)
      // A router is a gateway proxy: it is served the proxy generators' clusters.
      yield* c.waitFor((s) => s.types.get(TypeUrl.Cluster)?.resources.has("BlackHoleCluster") === true, WAIT)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("unknown type URLs are neither answered nor kept, logged once cut short, never labels", () =>
    Effect.gen(function* () {
      const lines: Array<string> = []
      const collect = Logger.make(({ message }) => {
        lines.push(String(Array.isArray(message) ? message.join(" ") : message))
      })
      const server = yield* makeXdsServer(config, mesh).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, collect)),
      )
      for (const method of ["StreamAggregatedResources", "DeltaAggregatedResources"] as const) {
        const raw = openRawStream(yield* session(server.port, true), method)
        for (let i = 0; i < 5; i++)
          yield* Effect.promise(() =>
            raw.send({ node: nodeOf(`unknown-${method}`), type_url: `type.googleapis.com/u${i}.${"u".repeat(MB)}` }),
          )
        // then a request of a served type is answered on the same stream
        const names = ["nothing:80"]
        yield* Effect.promise(() =>
          raw.send(
            method === "StreamAggregatedResources"
              ? { type_url: TypeUrl.Listener, resource_names: names }
              : { type_url: TypeUrl.Listener, resource_names_subscribe: names },
          ),
        )
        yield* poll(
          server.connections,
          (cs) => cs.some((c) => c.nodeId === nodeOf(`unknown-${method}`).id && c.watches.length === 1),
          WAIT,
        )
        const [status] = (yield* server.connections).filter((c) => c.nodeId === nodeOf(`unknown-${method}`).id)
        expect(status!.watches.map((w) => w.typeUrl)).toEqual([TypeUrl.Listener])
        // nothing near the size of the type URLs came back
        raw.stream.close()
        expect((yield* outcome(raw.closed)).bytes).toBeLessThan(10_000)
      }
      // Once per stream at most, and across streams once per interval: the second stream's line
      // is only counted toward the next summary.
      const unknown = lines.filter((l) => l.includes("unknown type"))
      expect(unknown).toHaveLength(1)
      for (const line of lines) expect(line.length).toBeLessThan(2000)
      const metrics = yield* Metrics
      const text = yield* Effect.promise(() => metrics.registry.metrics())
      expect(text).not.toContain("uuuu")
      expect(text.length).toBeLessThan(200_000)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("a NACK labels its reject gauge by node name and status code, not its text; gone on disconnect", () =>
    Effect.gen(function* () {
      const server = yield* makeXdsServer(config, mesh)
      const raw = openRawStream(yield* session(server.port, true), "StreamAggregatedResources")
      yield* Effect.promise(() => raw.send({ node: nodeOf("nacker"), type_url: TypeUrl.Cluster }))
      const watching = yield* poll(server.connections, (cs) => cs[0]?.watches[0]?.nonceSent !== undefined, WAIT)
      const nonce = watching[0]!.watches[0]!.nonceSent!
      const text = `rejected ${"e".repeat(64 * 1024)}`
      yield* Effect.promise(() =>
        raw.send({ type_url: TypeUrl.Cluster, response_nonce: nonce, error_detail: { code: 3, message: text } }),
      )
      const nacked = yield* poll(server.connections, (cs) => cs[0]?.watches[0]?.lastError !== undefined, WAIT)
      // the text is kept, cut short, for /debug/syncz
      expect(nacked[0]!.watches[0]!.lastError!.startsWith("rejected eee")).toBe(true)
      expect(nacked[0]!.watches[0]!.lastError!.length).toBeLessThan(1100)
      expect(yield* metricValue("pilot_xds_cds_reject", { node: "nacker.default", err: "InvalidArgument" })).toBe(1)
      const metrics = yield* Metrics
      expect(yield* Effect.promise(() => metrics.registry.metrics())).not.toContain("eeee")
      raw.stream.close()
      yield* Effect.promise(() => raw.closed)
      yield* poll(server.connections, (cs) => cs.length === 0, WAIT)
      expect(yield* metricValue("pilot_xds_cds_reject")).toBe(0)
      expect(yield* metricValue("pilot_total_xds_rejects", { type: "cds" })).toBe(1)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})
