/**
 * The bounds on the resource names an ADS caller makes the server hold (issue 34 finding 1,
 * name-budget.ts), through the real gRPC server and raw HTTP/2 streams: a request's size and
 * names as it is read, a stream's watched names, the server's total (released when a stream
 * ends), and the reasons kept for names that do not exist.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { makeXdsServer } from "../../../src/layers/xds/ads-server.js"
import { MAX_NOT_FOUND } from "../../../src/services/xds/cache/responder.js"
import { plainToStruct } from "../../../src/services/xds/protocol/messages.js"
import { MAX_RESOURCE_NAME_LENGTH } from "../../../src/services/xds/protocol/name-budget.js"
import { TypeUrl } from "../../../src/services/xds/protocol/type-urls.js"
import { defaultXdsServerConfig, type XdsServerConfig } from "../../../src/services/xds/server.js"
import { weightedMesh } from "../../fixtures/xds/mesh.js"
import { poll } from "../../support/metrics.js"
import { type AdsMethod, openRawStream, type RawOutcome, rawSession } from "../../support/raw-ads.js"

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
const WAIT = "20 seconds"
const INVALID_ARGUMENT = 3
const RESOURCE_EXHAUSTED = 8

const stream = (port: number, method: AdsMethod) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => rawSession(port, { reads: true })),
      (s) => Effect.sync(() => s.destroy()),
    ),
    (session) => openRawStream(session, method),
  )

const outcome = (closed: Promise<RawOutcome>) => Effect.promise(() => closed).pipe(Effect.timeout(WAIT), Effect.orDie)

const names = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}-${i}.example:80`)

describe("ADS server: bounds on resource names", () => {
  it.scopedLive("refuses a name over the length bound with INVALID_ARGUMENT, and a request over the size bound", () =>
    Effect.gen(function* () {
      const server = yield* makeXdsServer({ ...config, maxRecvMsgSize: 64 * 1024 }, mesh)
      const long = yield* stream(server.port, "StreamAggregatedResources")
      yield* Effect.promise(() =>
        long.send({
          node: nodeOf("long"),
          type_url: TypeUrl.Listener,
          resource_names: ["a:80", "n".repeat(MAX_RESOURCE_NAME_LENGTH + 1)],
        }),
      )
      const refused = yield* outcome(long.closed)
      expect(refused.grpcStatus).toBe(INVALID_ARGUMENT)
      expect(refused.message).toBe(
        `a name in resource_names is ${MAX_RESOURCE_NAME_LENGTH + 1} characters long; at most ${MAX_RESOURCE_NAME_LENGTH} are accepted`,
      )
      expect(refused.bytes).toBe(0)
      // Over MESH_GPRC_MAXRECVMSGSIZE: grpc-js refuses the message before anything reads it.
      const large = yield* stream(server.port, "DeltaAggregatedResources")
      yield* Effect.promise(() =>
        large.send({ node: nodeOf("large"), type_url: TypeUrl.Listener, resource_names_subscribe: names("big", 5000) }),
      )
      const tooLarge = yield* outcome(large.closed)
      expect(tooLarge.grpcStatus).toBe(RESOURCE_EXHAUSTED)
      expect(tooLarge.message).toMatch(/larger than max/)
      expect(yield* server.connections).toEqual([])
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("ends a delta stream whose subscriptions add up past its bound; others are served", () =>
    Effect.gen(function* () {
      const limits = { streamNames: 1000, streamBytes: 0, totalNames: 0, totalBytes: 0 }
      const server = yield* makeXdsServer({ ...config, nameLimits: limits }, mesh)
      const flood = yield* stream(server.port, "DeltaAggregatedResources")
      for (let i = 0; i < 3; i++)
        yield* Effect.promise(() =>
          flood.send({
            node: nodeOf("flood"),
            type_url: TypeUrl.Endpoint,
            resource_names_subscribe: names(`r${i}`, 400),
          }),
        )
      const refused = yield* outcome(flood.closed)
      expect(refused.grpcStatus).toBe(RESOURCE_EXHAUSTED)
      expect(refused.message).toBe(
        "the stream would watch 1200 resource names; at most 1000 per stream (MESH_XDS_MAX_STREAM_NAMES)",
      )
      // One request alone over the stream's bound is refused as it is read.
      const single = yield* stream(server.port, "StreamAggregatedResources")
      yield* Effect.promise(() =>
        single.send({ node: nodeOf("single"), type_url: TypeUrl.Listener, resource_names: names("one", 1001) }),
      )
      expect((yield* outcome(single.closed)).message).toBe(
        "the request names 1001 resources; a stream may watch at most 1000 (MESH_XDS_MAX_STREAM_NAMES)",
      )
      const good = yield* stream(server.port, "StreamAggregatedResources")
      yield* Effect.promise(() => good.send({ node: nodeOf("good"), type_url: TypeUrl.Cluster }))
      yield* poll(server.connections, (cs) => cs.length === 1 && cs[0]!.watches[0]?.nonceSent !== undefined, WAIT)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("refuses a stream taking the server over its total, and takes it once another stream ended", () =>
    Effect.gen(function* () {
      const limits = { streamNames: 0, streamBytes: 0, totalNames: 600, totalBytes: 0 }
      const server = yield* makeXdsServer({ ...config, nameLimits: limits }, mesh)
      const first = yield* stream(server.port, "StreamAggregatedResources")
      yield* Effect.promise(() =>
        first.send({ node: nodeOf("first"), type_url: TypeUrl.Listener, resource_names: names("a", 400) }),
      )
      yield* poll(server.connections, (cs) => cs[0]?.watches[0]?.nonceSent !== undefined, WAIT)
      const second = yield* stream(server.port, "StreamAggregatedResources")
      yield* Effect.promise(() =>
        second.send({ node: nodeOf("second"), type_url: TypeUrl.Listener, resource_names: names("b", 400) }),
      )
      const refused = yield* outcome(second.closed)
      expect(refused.grpcStatus).toBe(RESOURCE_EXHAUSTED)
      expect(refused.message).toBe(
        "the server's streams watch 400 resource names; at most 600 in all (MESH_XDS_MAX_NAMES)",
      )
      // The first stream leaves: its names are released.
      first.stream.close()
      yield* outcome(first.closed)
      yield* poll(server.connections, (cs) => cs.length === 0, WAIT)
      const third = yield* stream(server.port, "StreamAggregatedResources")
      yield* Effect.promise(() =>
        third.send({ node: nodeOf("third"), type_url: TypeUrl.Listener, resource_names: names("c", 400) }),
      )
      yield* poll(server.connections, (cs) => cs[0]?.watches[0]?.nonceSent !== undefined, WAIT)
      expect(third.stream.closed).toBe(false)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("keeps the first reasons for names that do not exist, and counts the rest", () =>
    Effect.gen(function* () {
      const server = yield* makeXdsServer(config, mesh)
      const raw = yield* stream(server.port, "StreamAggregatedResources")
      yield* Effect.promise(() =>
        raw.send({ node: nodeOf("lost"), type_url: TypeUrl.Listener, resource_names: names("nowhere", 250) }),
      )
      const [status] = yield* poll(server.connections, (cs) => cs[0]?.watches[0]?.warnings !== undefined, WAIT)
      const warnings = status!.watches[0]!.warnings!
      expect(warnings).toHaveLength(MAX_NOT_FOUND + 1)
      expect(warnings[0]).toMatch(/^requested listener nowhere-0\.example:80 not found/)
      expect(warnings[MAX_NOT_FOUND]).toBe(`${250 - MAX_NOT_FOUND} more requested lds resources not found`)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})
