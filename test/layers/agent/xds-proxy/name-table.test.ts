/**
 * NDS through the agent's xDS proxy (spec 001 part 1 rule 4): with a DNS proxy present the agent
 * subscribes to the name table after the downstream's first request, hands each table to the
 * DNS proxy, ACKs it upstream itself and never passes it down; a reconnect subscribes again with
 * the version held. Against the real discovery server: a sidecar with DNS_CAPTURE gets its table
 * through the agent's subscription alone.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { makeXdsProxy } from "../../../../src/layers/agent/xds-proxy/xds-proxy.js"
import { layer as metricsLayer } from "../../../../src/layers/metrics.js"
import { makeXdsServer } from "../../../../src/layers/xds/ads-server.js"
import { makeAdsClient } from "../../../../src/layers/xds-client/ads-client.js"
import type { NameTableSinkShape } from "../../../../src/services/agent/dns/name-table-sink.js"
import { plainToStruct } from "../../../../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../../../../src/services/xds/protocol/type-urls.js"
import type { NameTable } from "../../../../src/services/xds/proxygen/nds/name-table.js"
import { defaultXdsServerConfig } from "../../../../src/services/xds/server.js"
import type { ResponseEvent } from "../../../../src/services/xds-client/client.js"
import { service, weightedMesh } from "../../../fixtures/xds/mesh.js"
import { metricValue, poll } from "../../../support/metrics.js"
import { fakeUpstream, type Message } from "./fake-upstream.js"

const WAIT = "10 seconds"
const NDS = TypeUrl.NameTable
const node = {
  id: "sidecar~10.0.0.9~client.default~default.svc.cluster.local",
  metadata: plainToStruct({ DNS_CAPTURE: "true", NAMESPACE: "default" }),
}
const table = (host: string, ip: string) => ({ table: { [host]: { ips: [ip], registry: "Orchestrator" } } })

/** A sink recording every table the xDS proxy delivers. */
const recordingSink = () => {
  const tables: Array<NameTable> = []
  const sink: NameTableSinkShape = { update: (t) => Effect.sync(() => void tables.push(t)) }
  return { tables, sink }
}

const socketDir = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "mesh-xdsproxy-nds-"))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true })),
)

const setup = (mode: "sotw" | "delta") =>
  Effect.gen(function* () {
    const upstream = yield* fakeUpstream
    const socketPath = join(yield* socketDir, "XDS")
    const { tables, sink } = recordingSink()
    yield* makeXdsProxy({
      socketPath,
      upstream: `127.0.0.1:${upstream.port}`,
      retry: { base: Duration.millis(20), max: Duration.millis(200) },
      nameTableSink: sink,
    })
    const events: Array<ResponseEvent> = []
    const client = yield* makeAdsClient({
      address: `unix://${socketPath}`,
      mode,
      node,
      onResponse: (e) => events.push(e),
    })
    return { upstream, tables, client, events }
  })

const streamCount = (streams: ReadonlyArray<unknown>, n: number) =>
  poll(
    Effect.sync(() => streams.length),
    (l) => l >= n,
    WAIT,
  )
const requestsOf = (stream: { requests: Array<Message> }, until: (rs: Array<Message>) => boolean) =>
  poll(
    Effect.sync(() => [...stream.requests]),
    until,
    WAIT,
  )
const ofType = (rs: Array<Message>, typeUrl: string) => rs.filter((r) => r.type_url === typeUrl)

describe("xDS proxy: NDS", () => {
  it.scopedLive(
    "SotW: subscribes after the first request, delivers the table, ACKs it, keeps it from the downstream",
    () =>
      Effect.gen(function* () {
        const { upstream, tables, client, events } = yield* setup("sotw")
        yield* client.subscribe(TypeUrl.Cluster)
        yield* streamCount(upstream.streams, 1)
        const stream = upstream.streams[0]!
        const first = yield* requestsOf(stream, (rs) => ofType(rs, NDS).length === 1)
        // the downstream's request (with its node) goes first, then the agent's wildcard subscription
        expect(first[0]!.type_url).toBe(TypeUrl.Cluster)
        expect(first[0]!.node.id).toBe(node.id)
        expect(ofType(first, NDS)[0]!.resource_names ?? []).toEqual([])
        stream.send({
          version_info: "t1",
          type_url: NDS,
          nonce: "nds-1",
          resources: [{ "@type": NDS, ...table("reviews.default.svc.cluster.local", "10.96.0.7") }],
        })
        yield* poll(
          Effect.sync(() => tables.length),
          (n) => n === 1,
          WAIT,
        )
        expect(tables[0]).toEqual(table("reviews.default.svc.cluster.local", "10.96.0.7"))
        const acked = yield* requestsOf(stream, (rs) => ofType(rs, NDS).length === 2)
        expect(ofType(acked, NDS)[1]).toMatchObject({ version_info: "t1", response_nonce: "nds-1" })
        expect(ofType(acked, NDS)[1]!.error_detail).toBeFalsy()
        // a cluster response after it still comes down: the stream is fine, and no NDS ever did
        stream.send({ version_info: "c1", type_url: TypeUrl.Cluster, nonce: "cds-1", resources: [] })
        yield* poll(
          Effect.sync(() => events.length),
          (n) => n === 1,
          WAIT,
        )
        expect(events.map((e) => e.typeUrl)).toEqual([TypeUrl.Cluster])
        expect((yield* client.snapshot).types.has(NDS)).toBe(false)
      }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("SotW: a table that cannot be decoded is NACKed and the DNS proxy keeps its table", () =>
    Effect.gen(function* () {
      const { upstream, tables, client } = yield* setup("sotw")
      yield* client.subscribe(TypeUrl.Cluster)
      yield* streamCount(upstream.streams, 1)
      const stream = upstream.streams[0]!
      yield* requestsOf(stream, (rs) => ofType(rs, NDS).length === 1)
      stream.send({
        version_info: "t1",
        type_url: NDS,
        nonce: "a",
        resources: [{ "@type": NDS, ...table("a.example", "192.0.2.1") }],
      })
      stream.send({
        version_info: "t2",
        type_url: NDS,
        nonce: "b",
        resources: [{ type_url: NDS, value: Buffer.from([0x0a, 0xff]) }],
      })
      const rs = yield* requestsOf(stream, (rs) => ofType(rs, NDS).length === 3)
      expect(ofType(rs, NDS)[2]).toMatchObject({ version_info: "t1", response_nonce: "b" })
      expect(ofType(rs, NDS)[2]!.error_detail.message).toContain("name table")
      expect(tables).toHaveLength(1)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("SotW: a reconnect subscribes again, after the replayed subscriptions, with the version held", () =>
    Effect.gen(function* () {
      const { upstream, tables, client } = yield* setup("sotw")
      yield* client.subscribe(TypeUrl.Cluster)
      yield* streamCount(upstream.streams, 1)
      const stream = upstream.streams[0]!
      yield* requestsOf(stream, (rs) => ofType(rs, NDS).length === 1)
      stream.send({
        version_info: "t1",
        type_url: NDS,
        nonce: "a",
        resources: [{ "@type": NDS, ...table("a.example", "192.0.2.1") }],
      })
      yield* requestsOf(stream, (rs) => ofType(rs, NDS).length === 2)
      stream.drop()
      yield* streamCount(upstream.streams, 2)
      const second = upstream.streams[1]!
      const replayed = yield* requestsOf(second, (rs) => ofType(rs, NDS).length === 1)
      expect(replayed.map((r) => r.type_url)).toEqual([TypeUrl.Cluster, NDS])
      expect(replayed[0]!.node.id).toBe(node.id)
      expect(replayed[1]).toMatchObject({ version_info: "t1" })
      expect(replayed[1]!.response_nonce ?? "").toBe("")
      second.send({
        version_info: "t2",
        type_url: NDS,
        nonce: "b",
        resources: [{ "@type": NDS, ...table("b.example", "192.0.2.2") }],
      })
      yield* poll(
        Effect.sync(() => tables.length),
        (n) => n === 2,
        WAIT,
      )
      expect(Object.keys(tables[1]!.table)).toEqual(["b.example"])
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("delta: subscribes, delivers, ACKs, keeps NDS from the downstream; a reconnect names the version", () =>
    Effect.gen(function* () {
      const { upstream, tables, client, events } = yield* setup("delta")
      yield* client.subscribe(TypeUrl.Cluster)
      yield* streamCount(upstream.streams, 1)
      const stream = upstream.streams[0]!
      const first = yield* requestsOf(stream, (rs) => ofType(rs, NDS).length === 1)
      expect(first[0]!.type_url).toBe(TypeUrl.Cluster)
      stream.send({
        system_version_info: "s1",
        type_url: NDS,
        nonce: "d1",
        resources: [{ name: "", version: "h1", resource: { "@type": NDS, ...table("a.example", "192.0.2.1") } }],
      })
      yield* poll(
        Effect.sync(() => tables.length),
        (n) => n === 1,
        WAIT,
      )
      const acked = yield* requestsOf(stream, (rs) => ofType(rs, NDS).length === 2)
      expect(ofType(acked, NDS)[1]).toMatchObject({ response_nonce: "d1" })
      stream.send({ system_version_info: "s2", type_url: NDS, nonce: "d2", removed_resources: [""] })
      yield* poll(
        Effect.sync(() => tables.length),
        (n) => n === 2,
        WAIT,
      )
      expect(tables[1]).toEqual({ table: {} })
      stream.send({
        system_version_info: "s3",
        type_url: NDS,
        nonce: "d3",
        resources: [{ name: "", version: "h3", resource: { "@type": NDS, ...table("c.example", "192.0.2.3") } }],
      })
      yield* requestsOf(stream, (rs) => ofType(rs, NDS).length === 4)
      stream.drop()
      yield* streamCount(upstream.streams, 2)
      const replayed = yield* requestsOf(upstream.streams[1]!, (rs) => ofType(rs, NDS).length === 1)
      expect(ofType(replayed, NDS)[0]!.initial_resource_versions).toEqual({ "": "h3" })
      expect(events.filter((e) => e.typeUrl === NDS)).toEqual([])
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive(
    "the real discovery server sends a DNS_CAPTURE sidecar its table through the agent's subscription",
    () =>
      Effect.gen(function* () {
        const vip = { ...service("vip.default.svc.cluster.local"), addresses: ["10.96.0.50"] }
        const mesh = weightedMesh({ address: "10.0.0.1", port: 8080 }, { address: "10.0.0.2", port: 8080 })
        const server = yield* makeXdsServer(
          {
            ...defaultXdsServerConfig,
            host: "127.0.0.1",
            port: 0,
            debounce: {
              debounceAfter: Duration.millis(10),
              debounceMax: Duration.millis(200),
              enableEdsDebounce: true,
            },
            shutdownDuration: Duration.millis(200),
          },
          { ...mesh, services: [...mesh.services, vip] },
        )
        const socketPath = join(yield* socketDir, "XDS")
        const { tables, sink } = recordingSink()
        yield* makeXdsProxy({ socketPath, upstream: `127.0.0.1:${server.port}`, nameTableSink: sink })
        const events: Array<ResponseEvent> = []
        const client = yield* makeAdsClient({
          address: `unix://${socketPath}`,
          mode: "sotw",
          node,
          onResponse: (e) => events.push(e),
        })
        yield* client.subscribe(TypeUrl.Cluster)
        yield* poll(
          Effect.sync(() => tables.length),
          (n) => n >= 1,
          WAIT,
        )
        expect(tables.at(-1)!.table["vip.default.svc.cluster.local"]?.ips).toEqual(["10.96.0.50"])
        // the server saw the agent's ACK
        yield* poll(
          server.connections,
          (cs) =>
            cs[0]?.watches.some((w) => w.typeUrl === NDS && w.nonceSent !== "" && w.nonceAcked === w.nonceSent) ??
            false,
          WAIT,
        )
        yield* client.waitFor((s) => (s.types.get(TypeUrl.Cluster)?.acks ?? 0) >= 1, WAIT)
        expect(events.some((e) => e.typeUrl === NDS)).toBe(false)
        expect(yield* metricValue("xds_proxy_responses")).toBeGreaterThanOrEqual(2)
      }).pipe(Effect.provide(metricsLayer("test"))),
  )
})
