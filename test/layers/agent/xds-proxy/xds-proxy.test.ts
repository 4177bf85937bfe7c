/**
 * The agent's xDS proxy between the project's ADS client (on the unix socket) and the real ADS
 * server: SotW and delta pass through, NACKs reach the server unchanged, and a discovery-server
 * restart is bridged (upstream reopened, subscriptions replayed; delta: with the ACKed versions, so
 * unchanged resources are not resent) without dropping the downstream.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { type AddressInfo, connect, createServer, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Scope } from "effect"
import { makeXdsProxy } from "../../../../src/layers/agent/xds-proxy/xds-proxy.js"
import { layer as metricsLayer } from "../../../../src/layers/metrics.js"
import { makeXdsServer } from "../../../../src/layers/xds/ads-server.js"
import { makeAdsClient } from "../../../../src/layers/xds-client/ads-client.js"
import { clusterName } from "../../../../src/services/xds/grpcgen/grpc-gen.js"
import { plainToStruct } from "../../../../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../../../../src/services/xds/protocol/type-urls.js"
import { defaultXdsServerConfig } from "../../../../src/services/xds/server.js"
import type { AdsClientOptions, ClientSnapshot, ResponseEvent } from "../../../../src/services/xds-client/client.js"
import { ECHO, endpoint, service, weightedMesh } from "../../../fixtures/xds/mesh.js"
import { metricValue, poll } from "../../../support/metrics.js"

const config = {
  ...defaultXdsServerConfig,
  host: "127.0.0.1",
  port: 0,
  debounce: { debounceAfter: Duration.millis(10), debounceMax: Duration.millis(200), enableEdsDebounce: true },
  shutdownDuration: Duration.millis(200),
}
const mesh = weightedMesh({ address: "10.0.0.1", port: 8080 }, { address: "10.0.0.2", port: 8080 })
const node = {
  id: "sidecar~10.0.0.9~client.default~default.svc.cluster.local",
  metadata: plainToStruct({ GENERATOR: "grpc" }),
}
const WAIT = "10 seconds"
const V1 = clusterName(ECHO, 80, "v1")
const V2 = clusterName(ECHO, 80, "v2")
const held = (s: ClientSnapshot, typeUrl: string) => [...(s.types.get(typeUrl)?.resources.keys() ?? [])].sort()

/** A server in its own scope so that a test can stop and restart it on the same port. */
const serverIn = (port: number, initial = mesh) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const server = yield* makeXdsServer({ ...config, port }, initial).pipe(Scope.extend(scope))
    return { server, stop: Scope.close(scope, Exit.void) }
  })

const setup = Effect.gen(function* () {
  const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "mesh-xdsproxy-")))
  yield* Effect.addFinalizer(() => Effect.promise(() => rm(dir, { recursive: true, force: true })))
  const first = yield* serverIn(0)
  const socketPath = join(dir, "XDS")
  const proxy = yield* makeXdsProxy({
    socketPath,
    upstream: `127.0.0.1:${first.server.port}`,
    retry: { base: Duration.millis(20), max: Duration.millis(200) },
  })
  const client = (mode: "sotw" | "delta", extra: Partial<AdsClientOptions> = {}) =>
    makeAdsClient({ address: `unix://${socketPath}`, mode, node, ...extra })
  return { first, proxy, client, socketPath }
})

describe("xDS proxy", () => {
  it.scopedLive("passes SotW through and counts requests and responses", () =>
    Effect.gen(function* () {
      const { proxy, client, first } = yield* setup
      expect(yield* proxy.receivedResponse).toBe(false)
      const c = yield* client("sotw")
      yield* c.subscribe(TypeUrl.Cluster)
      yield* c.subscribe(TypeUrl.Endpoint, [V1, V2])
      const s = yield* c.waitFor(
        (s) => held(s, TypeUrl.Cluster).length === 3 && held(s, TypeUrl.Endpoint).length === 2,
        WAIT,
      )
      expect(s.types.get(TypeUrl.Cluster)!.version).toBe((yield* first.server.pushContext).version)
      expect(yield* proxy.receivedResponse).toBe(true)
      expect(yield* proxy.activeStreams).toBe(1)
      // the server sees the downstream's node and its ACKs
      const cs = yield* poll(
        first.server.connections,
        (cs) => cs.length === 1 && cs[0]!.watches.every((w) => w.nonceAcked === w.nonceSent),
        WAIT,
      )
      expect(cs[0]!.generator).toBe("grpc")
      expect(yield* metricValue("xds_proxy_requests")).toBeGreaterThanOrEqual(4)
      expect(yield* metricValue("xds_proxy_responses")).toBeGreaterThanOrEqual(2)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("forwards NACKs unchanged", () =>
    Effect.gen(function* () {
      const { client, first } = yield* setup
      let reject = false
      const c = yield* client("sotw", {
        validate: (typeUrl) => (reject && typeUrl === TypeUrl.Cluster ? "rejected through the proxy" : undefined),
      })
      yield* c.subscribe(TypeUrl.Cluster)
      yield* c.waitFor((s) => (s.types.get(TypeUrl.Cluster)?.acks ?? 0) === 1, WAIT)
      reject = true
      yield* first.server.update({ ...mesh, services: [...mesh.services, service("new.default.svc.cluster.local")] })
      yield* c.waitFor((s) => (s.types.get(TypeUrl.Cluster)?.nacks ?? 0) === 1, WAIT)
      const status = yield* poll(
        first.server.connections,
        (cs) => cs[0]?.watches.find((w) => w.typeUrl === TypeUrl.Cluster)?.lastError !== undefined,
        WAIT,
      )
      expect(status[0]!.watches.find((w) => w.typeUrl === TypeUrl.Cluster)!.lastError).toBe(
        "rejected through the proxy",
      )
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("passes delta through", () =>
    Effect.gen(function* () {
      const { client } = yield* setup
      const c = yield* client("delta")
      yield* c.subscribe(TypeUrl.Cluster)
      yield* c.subscribe(TypeUrl.Endpoint, [V1])
      const s = yield* c.waitFor(
        (s) => held(s, TypeUrl.Cluster).length === 3 && held(s, TypeUrl.Endpoint).length === 1,
        WAIT,
      )
      expect(held(s, TypeUrl.Endpoint)).toEqual([V1])
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("bridges a discovery-server restart: the downstream stream stays open and gets new config", () =>
    Effect.gen(function* () {
      const { client, first, proxy } = yield* setup
      const port = first.server.port
      const c = yield* client("sotw")
      yield* c.subscribe(TypeUrl.Cluster)
      yield* c.subscribe(TypeUrl.Endpoint, [V1, V2])
      yield* c.waitFor((s) => held(s, TypeUrl.Endpoint).length === 2, WAIT)
      yield* first.stop
      // while the server is away the proxy fails to connect and backs off
      yield* poll(metricValue("meshd_connection_terminations"), (n) => n >= 1, WAIT)
      yield* poll(metricValue("meshd_connection_failures"), (n) => n >= 1, WAIT)
      expect(yield* proxy.activeStreams).toBe(1)
      // the new server has one more endpoint: the client sees it on the same stream
      const second = yield* serverIn(port, {
        ...mesh,
        endpoints: [...mesh.endpoints, endpoint(ECHO, "10.0.0.3", 8080, { labels: { version: "v1" } })],
      })
      yield* Effect.addFinalizer(() => second.stop)
      const after = yield* c.waitFor((s) => {
        const cla = s.types.get(TypeUrl.Endpoint)?.resources.get(V1)?.resource as
          | { endpoints?: Array<{ lb_endpoints: unknown[] }> }
          | undefined
        return cla?.endpoints?.[0]?.lb_endpoints.length === 2
      }, WAIT)
      expect(after.connected).toBe(true)
      const cs = yield* poll(second.server.connections, (cs) => cs.length === 1, WAIT)
      expect(cs[0]!.watches.map((w) => w.typeUrl).sort()).toEqual([TypeUrl.Cluster, TypeUrl.Endpoint].sort())
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
  it.scopedLive(
    "bridges a restart on a delta stream: the ACKed versions are replayed, only changed resources resent",
    () =>
      Effect.gen(function* () {
        const { client, first } = yield* setup
        const port = first.server.port
        const events: Array<ResponseEvent> = []
        const c = yield* client("delta", { onResponse: (e) => events.push(e) })
        yield* c.subscribe(TypeUrl.Endpoint, [V1, V2])
        yield* c.waitFor(
          (s) => (s.types.get(TypeUrl.Endpoint)?.acks ?? 0) >= 1 && held(s, TypeUrl.Endpoint).length === 2,
          WAIT,
        )
        yield* first.stop
        yield* poll(metricValue("meshd_connection_failures"), (n) => n >= 1, WAIT)
        const before = events.length
        // v1 gains an endpoint, v2 is unchanged
        const second = yield* serverIn(port, {
          ...mesh,
          endpoints: [...mesh.endpoints, endpoint(ECHO, "10.0.0.3", 8080, { labels: { version: "v1" } })],
        })
        yield* Effect.addFinalizer(() => second.stop)
        yield* c.waitFor((s) => {
          const cla = s.types.get(TypeUrl.Endpoint)?.resources.get(V1)?.resource as
            | { endpoints?: Array<{ lb_endpoints: unknown[] }> }
            | undefined
          return cla?.endpoints?.[0]?.lb_endpoints.length === 2
        }, WAIT)
        const resent = events.slice(before).filter((e) => e.typeUrl === TypeUrl.Endpoint)
        expect(resent.reduce((n, e) => n + e.resources, 0)).toBe(1)
        expect(held(yield* c.snapshot, TypeUrl.Endpoint)).toEqual([V1, V2].sort())
      }).pipe(Effect.provide(metricsLayer("test"))),
  )
  it.scopedLive("keepalive: an upstream connection that goes silent (no reset) is given up and reopened", () =>
    Effect.gen(function* () {
      const { first } = yield* setup
      // a relay to the server that can freeze: nothing is read or closed (as when a host vanishes)
      // until it thaws
      let frozen = false
      const sockets: Array<Socket> = []
      const relay = createServer((inbound) => {
        const outbound = connect(first.server.port, "127.0.0.1")
        for (const socket of [inbound, outbound]) {
          sockets.push(socket)
          if (frozen) socket.pause()
        }
        inbound.pipe(outbound).on("error", () => inbound.destroy())
        outbound.pipe(inbound).on("error", () => outbound.destroy())
      })
      const freeze = (on: boolean) => {
        frozen = on
        for (const socket of sockets)
          if (on) socket.pause()
          else socket.resume()
      }
      yield* Effect.acquireRelease(
        Effect.async<void>((resume) => {
          relay.listen(0, "127.0.0.1", () => resume(Effect.void))
        }),
        () =>
          Effect.sync(() => {
            for (const socket of sockets) socket.destroy()
            relay.close()
          }),
      )
      const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "mesh-xdsproxy-ka-")))
      yield* Effect.addFinalizer(() => Effect.promise(() => rm(dir, { recursive: true, force: true })))
      const socketPath = join(dir, "XDS")
      yield* makeXdsProxy({
        socketPath,
        upstream: `127.0.0.1:${(relay.address() as AddressInfo).port}`,
        retry: { base: Duration.millis(20), max: Duration.millis(200) },
        keepalive: { interval: Duration.millis(200), timeout: Duration.millis(200) },
      })
      const c = yield* makeAdsClient({ address: `unix://${socketPath}`, mode: "sotw", node })
      yield* c.subscribe(TypeUrl.Cluster)
      yield* c.waitFor((s) => held(s, TypeUrl.Cluster).length === 3, WAIT)
      const before = yield* metricValue("meshd_connection_terminations")
      freeze(true)
      yield* poll(metricValue("meshd_connection_terminations"), (n) => n > before, WAIT)
      // the relay thaws: the reopened upstream serves the same downstream stream again
      freeze(false)
      yield* first.server.update({ ...mesh, services: [...mesh.services, service("new.default.svc.cluster.local")] })
      const after = yield* c.waitFor((s) => held(s, TypeUrl.Cluster).length === 4, WAIT)
      expect(after.connected).toBe(true)
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})
