import { describe, expect, it } from "@effect/vitest"
import * as grpc from "@grpc/grpc-js"
import { Context, Duration, Effect, Exit, Layer, Logger, Queue, Scope, Stream } from "effect"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { makeXdsServer, layerDiscovery as xdsDiscoveryLayer } from "../../../src/layers/xds/ads-server.js"
import { loadXdsProtos } from "../../../src/layers/xds/protos.js"
import { makeAdsClient } from "../../../src/layers/xds-client/ads-client.js"
import { clusterName } from "../../../src/services/xds/grpcgen/grpc-gen.js"
import type { PushContextInput } from "../../../src/services/xds/model/push-context.js"
import { plainToStruct } from "../../../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../../../src/services/xds/protocol/type-urls.js"
import { defaultXdsServerConfig, XdsServer } from "../../../src/services/xds/server.js"
import type { AdsClientOptions, ClientSnapshot } from "../../../src/services/xds-client/client.js"
import { ECHO, endpoint, resource, service, weightedMesh } from "../../fixtures/xds/mesh.js"
import { metricValue, poll } from "../../support/metrics.js"

const config = {
  ...defaultXdsServerConfig,
  host: "127.0.0.1",
  port: 0,
  debounce: { debounceAfter: Duration.millis(10), debounceMax: Duration.millis(200), enableEdsDebounce: true },
  pushThrottle: 4,
  shutdownDuration: Duration.seconds(1),
}

const mesh = weightedMesh({ address: "10.0.0.1", port: 8080 }, { address: "10.0.0.2", port: 8080 })

const node = {
  id: "sidecar~10.0.0.9~client.default~default.svc.cluster.local",
  metadata: plainToStruct({ GENERATOR: "grpc" }),
}

const startServer = (initial: PushContextInput = mesh) => makeXdsServer(config, initial)

const client = (port: number, mode: "sotw" | "delta", extra: Partial<AdsClientOptions> = {}) =>
  makeAdsClient({ address: `127.0.0.1:${port}`, mode, node, ...extra })

const held = (s: ClientSnapshot, typeUrl: string) => [...(s.types.get(typeUrl)?.resources.keys() ?? [])].sort()
const WAIT = "10 seconds"

const V1 = clusterName(ECHO, 80, "v1")
const V2 = clusterName(ECHO, 80, "v2")
const LISTENER = `${ECHO}:80`

describe("ADS server (SotW)", () => {
  it.scopedLive("serves CDS, EDS, LDS and RDS; ACKs are recorded; endpoint changes push EDS only", () =>
    Effect.gen(function* () {
      const server = yield* startServer()
      const c = yield* client(server.port, "sotw")
      yield* c.subscribe(TypeUrl.Cluster)
      yield* c.subscribe(TypeUrl.Endpoint, [V1, V2])
      yield* c.subscribe(TypeUrl.Listener, [LISTENER])
      yield* c.subscribe(TypeUrl.Route, [LISTENER])
      const s = yield* c.waitFor(
        (s) =>
          held(s, TypeUrl.Cluster).length === 3 &&
          held(s, TypeUrl.Endpoint).length === 2 &&
          held(s, TypeUrl.Route).length === 1,
        WAIT,
      )
      expect(held(s, TypeUrl.Listener)).toEqual([LISTENER])
      const version = s.types.get(TypeUrl.Cluster)!.version
      expect(version).toBe((yield* server.pushContext).version)

      // the server records the ACKs
      const acked = yield* poll(
        server.connections,
        (cs) =>
          cs.length === 1 && cs[0]!.watches.length === 4 && cs[0]!.watches.every((w) => w.nonceAcked === w.nonceSent),
        WAIT,
      )
      expect(acked[0]!.generator).toBe("grpc")
      expect(yield* metricValue("pilot_xds")).toBe(1)

      // endpoint change: EDS pushed, CDS not resent
      const cdsResponses = s.types.get(TypeUrl.Cluster)!.responses
      yield* server.update({
        ...mesh,
        endpoints: [...mesh.endpoints, endpoint(ECHO, "10.0.0.3", 8080, { labels: { version: "v1" } })],
      })
      const after = yield* c.waitFor((s) => {
        const cla = s.types.get(TypeUrl.Endpoint)?.resources.get(V1)?.resource as
          | { endpoints?: Array<{ lb_endpoints: unknown[] }> }
          | undefined
        return cla?.endpoints?.[0]?.lb_endpoints.length === 2
      }, WAIT)
      expect(after.types.get(TypeUrl.Cluster)!.responses).toBe(cdsResponses)
      expect(yield* metricValue("pilot_inbound_updates", { type: "eds" })).toBe(1)
      expect(yield* metricValue("pilot_xds_pushes", { type: "eds" })).toBeGreaterThanOrEqual(2)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("a NACK is recorded with its error, counted, and keeps the last good version", () =>
    Effect.gen(function* () {
      const server = yield* startServer()
      let reject = false
      const c = yield* client(server.port, "sotw", {
        validate: (typeUrl) => (reject && typeUrl === TypeUrl.Cluster ? "cluster rejected by test" : undefined),
      })
      yield* c.subscribe(TypeUrl.Cluster)
      const first = yield* c.waitFor((s) => (s.types.get(TypeUrl.Cluster)?.acks ?? 0) === 1, WAIT)
      const goodVersion = first.types.get(TypeUrl.Cluster)!.version
      // the server must have processed the ACK before the next push (else it is a stale nonce)
      yield* poll(server.connections, (cs) => cs[0]?.watches[0]?.versionAcked === goodVersion, WAIT)
      reject = true
      yield* server.update({ ...mesh, services: [...mesh.services, service("new.default.svc.cluster.local")] })
      const nacked = yield* c.waitFor((s) => (s.types.get(TypeUrl.Cluster)?.nacks ?? 0) === 1, WAIT)
      expect(nacked.types.get(TypeUrl.Cluster)!.version).toBe(goodVersion)
      const status = yield* poll(
        server.connections,
        (cs) => cs[0]?.watches.find((w) => w.typeUrl === TypeUrl.Cluster)?.lastError !== undefined,
        WAIT,
      )
      const watch = status[0]!.watches.find((w) => w.typeUrl === TypeUrl.Cluster)!
      expect(watch.lastError).toBe("cluster rejected by test")
      expect(watch.versionAcked).toBe(goodVersion)
      expect(yield* metricValue("pilot_total_xds_rejects", { type: "cds" })).toBe(1)
      expect(yield* metricValue("pilot_xds_cds_reject")).toBe(1)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("stale nonces are ignored and counted; a reconnect with version_info and no nonce is answered", () =>
    Effect.gen(function* () {
      const server = yield* startServer()
      const c = yield* client(server.port, "sotw")
      yield* c.subscribe(TypeUrl.Cluster)
      const s = yield* c.waitFor((s) => (s.types.get(TypeUrl.Cluster)?.acks ?? 0) === 1, WAIT)
      yield* c.sendRaw({ type_url: TypeUrl.Cluster, response_nonce: "not-a-nonce-we-sent", version_info: "x" })
      yield* poll(metricValue("pilot_xds_expired_nonce", { type: "cds" }), (n) => n === 1, WAIT)
      // a second stream resumes from the first one's version with an empty nonce
      const again = yield* client(server.port, "sotw")
      yield* again.sendRaw({
        type_url: TypeUrl.Cluster,
        version_info: s.types.get(TypeUrl.Cluster)!.version,
        response_nonce: "",
      })
      yield* again.waitFor((s) => held(s, TypeUrl.Cluster).length === 3, WAIT)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})

describe("ADS server (delta)", () => {
  it.scopedLive("sends only changed resources, explicit removals, and handles subscribe/unsubscribe", () =>
    Effect.gen(function* () {
      const server = yield* startServer()
      const c = yield* client(server.port, "delta")
      yield* c.subscribe(TypeUrl.Endpoint, [V1, V2, "outbound|80||missing.default.svc.cluster.local"])
      const s1 = yield* c.waitFor((s) => held(s, TypeUrl.Endpoint).length === 2, WAIT)
      expect(s1.types.get(TypeUrl.Endpoint)!.lastRemoved).toEqual(["outbound|80||missing.default.svc.cluster.local"])
      const bytesBefore = s1.types.get(TypeUrl.Endpoint)!.bytesReceived

      // change only v2's endpoint: only V2 is resent
      const v2Moved = {
        ...mesh,
        endpoints: [mesh.endpoints[0]!, endpoint(ECHO, "10.0.0.7", 8080, { labels: { version: "v2" } })],
      }
      yield* server.update(v2Moved)
      const s2 = yield* c.waitFor((s) => (s.types.get(TypeUrl.Endpoint)?.responses ?? 0) === 2, WAIT)
      const t2 = s2.types.get(TypeUrl.Endpoint)!
      expect(t2.resources.get(V1)!.version).toBe(s1.types.get(TypeUrl.Endpoint)!.resources.get(V1)!.version)
      expect(t2.resources.get(V2)!.version).not.toBe(s1.types.get(TypeUrl.Endpoint)!.resources.get(V2)!.version)
      const sentBytes = t2.bytesReceived - bytesBefore
      expect(sentBytes).toBe(t2.resources.get(V2)!.bytes)

      // unsubscribe V1: no resend; then the subset disappears: explicit removal of V2
      yield* c.unsubscribe(TypeUrl.Endpoint, [V1])
      yield* server.update({ ...v2Moved, destinationRules: [] })
      const s3 = yield* c.waitFor((s) => s.types.get(TypeUrl.Endpoint)?.lastRemoved.includes(V2) ?? false, WAIT)
      expect(held(s3, TypeUrl.Endpoint)).toEqual([])

      // wildcard CDS over delta, then a removed service shows up in removed_resources
      yield* c.subscribe(TypeUrl.Cluster)
      yield* c.waitFor((s) => held(s, TypeUrl.Cluster).length === 1, WAIT)
      yield* server.update({ ...v2Moved, destinationRules: [], services: [] })
      const s4 = yield* c.waitFor((s) => held(s, TypeUrl.Cluster).length === 0, WAIT)
      expect(s4.types.get(TypeUrl.Cluster)!.lastRemoved).toEqual([clusterName(ECHO, 80)])
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("honours initial_resource_versions on reconnect", () =>
    Effect.gen(function* () {
      const server = yield* startServer()
      const first = yield* client(server.port, "delta")
      yield* first.subscribe(TypeUrl.Endpoint, [V1, V2])
      const s = yield* first.waitFor((s) => held(s, TypeUrl.Endpoint).length === 2, WAIT)
      const versions = Object.fromEntries(
        [...s.types.get(TypeUrl.Endpoint)!.resources.entries()].map(([name, r]) => [name, r.version]),
      )
      versions[V2] = "stale"
      const second = yield* client(server.port, "delta")
      yield* second.sendRaw({
        type_url: TypeUrl.Endpoint,
        resource_names_subscribe: [V1, V2],
        initial_resource_versions: versions,
      })
      const got = yield* second.waitFor((s) => (s.types.get(TypeUrl.Endpoint)?.responses ?? 0) === 1, WAIT)
      expect(held(got, TypeUrl.Endpoint)).toEqual([V2])
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})

describe("xdsDiscoveryLayer", () => {
  it.scopedLive("follows a stream of PushContext inputs and exposes its metrics", () =>
    Effect.gen(function* () {
      const server = yield* XdsServer
      const c = yield* client(server.port, "sotw")
      yield* c.subscribe(TypeUrl.Cluster)
      yield* c.waitFor((s) => held(s, TypeUrl.Cluster).length === 3, WAIT)
      expect(yield* metricValue("pilot_eds_no_instances")).toBe(0)
    }).pipe(
      Effect.provide(xdsDiscoveryLayer(config, Stream.make(mesh)).pipe(Layer.provideMerge(metricsLayer("test")))),
    ),
  )
})

/** Opens one SotW stream with a raw grpc-js client: the first response's size, or the stream's error code. */
const firstAnswer = (port: number) =>
  Effect.async<{ readonly resources?: number; readonly code?: number }>((resume) => {
    const Client = grpc.makeGenericClientConstructor(loadXdsProtos().ads, "AggregatedDiscoveryService")
    const raw = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure())
    const stream = (
      raw as unknown as Record<string, () => grpc.ClientDuplexStream<unknown, unknown>>
    ).StreamAggregatedResources!.call(raw)
    const done = (outcome: { readonly resources?: number; readonly code?: number }) => {
      stream.removeAllListeners()
      stream.on("error", () => {})
      stream.cancel()
      raw.close()
      resume(Effect.succeed(outcome))
    }
    stream.on("data", (r: { resources?: ReadonlyArray<unknown> }) => done({ resources: r.resources?.length ?? 0 }))
    stream.on("error", (e: grpc.ServiceError) => done({ code: e.code }))
    stream.write({ node, type_url: TypeUrl.Cluster, resource_names: [] })
  })

describe("xdsDiscoveryLayer before its first input", () => {
  it.scopedLive(
    "refuses streams UNAVAILABLE, never serving the empty starting state, then serves the first input",
    () =>
      Effect.gen(function* () {
        const inputs = yield* Queue.unbounded<PushContextInput>()
        const context = yield* Layer.build(
          xdsDiscoveryLayer(config, Stream.fromQueue(inputs)).pipe(Layer.provideMerge(metricsLayer("test"))),
        )
        const server = Context.get(context, XdsServer)
        expect(yield* firstAnswer(server.port)).toEqual({ code: grpc.status.UNAVAILABLE })
        yield* Queue.offer(inputs, mesh)
        const served = yield* poll(firstAnswer(server.port), (a) => a.code === undefined, WAIT)
        expect(served.resources).toBe(3)
      }),
  )
})

describe("generator warnings", () => {
  it.scopedLive("a skipped AuthorizationPolicy is logged once through the program's logger", () =>
    Effect.gen(function* () {
      const lines: Array<string> = []
      const collect = Logger.make(({ message }) => {
        lines.push(String(Array.isArray(message) ? message.join(" ") : message))
      })
      const audit = {
        ...resource("AuthorizationPolicy", "audit-logged", { action: "AUDIT", rules: [{}] }),
        group: "security.mesh.io",
      }
      const server = yield* makeXdsServer(config, { ...mesh, authorizationPolicies: [audit] }).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, collect)),
      )
      const inbound = "xds.mesh.io/grpc/lds/inbound/0.0.0.0:50051"
      for (const id of ["first", "second"]) {
        const c = yield* client(server.port, "sotw", {
          node: { ...node, id: `sidecar~10.0.0.9~${id}.default~default.svc.cluster.local` },
        })
        yield* c.subscribe(TypeUrl.Listener, [inbound])
        yield* c.waitFor((s) => held(s, TypeUrl.Listener).includes(inbound), WAIT)
      }
      expect(lines.filter((l) => l.includes("default/audit-logged: action AUDIT"))).toHaveLength(1)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})

describe("ADS client reconnect", () => {
  it.scopedLive("re-opens the stream after a server restart and resubscribes with what it holds", () =>
    Effect.gen(function* () {
      const first = yield* Scope.make()
      const server = yield* startServer().pipe(Scope.extend(first))
      const port = server.port
      const clients = []
      for (const mode of ["sotw", "delta"] as const) {
        const c = yield* client(port, mode)
        yield* c.subscribe(TypeUrl.Cluster)
        yield* c.waitFor((s) => held(s, TypeUrl.Cluster).length === 3, WAIT)
        clients.push(c)
      }
      yield* Scope.close(first, Exit.void)
      const restarted = yield* makeXdsServer({ ...config, port }, { ...mesh, destinationRules: [] })
      // both clients come back and converge on the new state (subset clusters gone)
      yield* poll(restarted.connections, (cs) => cs.length === 2, WAIT)
      const statuses = yield* restarted.connections
      expect(statuses.map((c) => c.delta).sort()).toEqual([false, true])
      for (const c of clients) yield* c.waitFor((s) => held(s, TypeUrl.Cluster).length === 1, WAIT)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})
