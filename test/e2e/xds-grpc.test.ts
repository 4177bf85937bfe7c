/**
 * End to end with the real proxyless client: @grpc/grpc-js-xds channels (`xds:///host:port`)
 * configured by our ADS server route real RPCs to real gRPC backends. grpc-js-xds reads its
 * bootstrap once per process, so this file owns the process's bootstrap (vitest forks per file).
 */
import * as grpc from "@grpc/grpc-js"
import * as xds from "@grpc/grpc-js-xds"
import { Duration, Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { layer as metricsLayer } from "../../src/layers/metrics.js"
import { makeXdsServer } from "../../src/layers/xds/ads-server.js"
import type { PushContextInput } from "../../src/services/xds/model/push-context.js"
import { TypeUrl } from "../../src/services/xds/protocol/type-urls.js"
import { defaultXdsServerConfig, type XdsServerShape } from "../../src/services/xds/server.js"
import { callEcho, type EchoBackend, EchoClient, startEchoBackend } from "../fixtures/xds/echo-backend.js"
import { destinationRule, ECHO, endpoint, input, service, virtualService } from "../fixtures/xds/mesh.js"

const config = {
  ...defaultXdsServerConfig,
  host: "127.0.0.1",
  port: 0,
  debounce: { debounceAfter: Duration.millis(10), debounceMax: Duration.millis(500), enableEdsDebounce: true },
  shutdownDuration: Duration.seconds(2),
}

let scope: Scope.CloseableScope
let server: XdsServerShape
let v1: EchoBackend
let v2: EchoBackend
let v1b: EchoBackend
const clients: Array<grpc.Client> = []

const startServer = (port: number, initial: PushContextInput) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const s = yield* Scope.make()
      const shape = yield* makeXdsServer({ ...config, port }, initial).pipe(
        Effect.provide(metricsLayer("test")),
        Scope.extend(s),
      )
      return { scope: s, server: shape }
    }),
  )

const subsets = destinationRule("echo", {
  host: "echo",
  subsets: [
    { name: "v1", labels: { version: "v1" } },
    { name: "v2", labels: { version: "v2" } },
  ],
})

const base = (): PushContextInput =>
  input({
    services: [service(ECHO, [80])],
    endpoints: [
      endpoint(ECHO, "127.0.0.1", v1.port, { labels: { version: "v1" } }),
      endpoint(ECHO, "127.0.0.1", v2.port, { labels: { version: "v2" } }),
    ],
    destinationRules: [subsets],
  })

const withVs = (http: unknown): PushContextInput => ({
  ...base(),
  virtualServices: [virtualService("echo", { hosts: ["echo"], http })],
})

/** Applies new inputs and waits until every client has ACKed the resulting version of a type. */
const apply = async (next: PushContextInput, typeUrl: string = TypeUrl.Route) => {
  const before = (await Effect.runPromise(server.pushContext)).version
  await Effect.runPromise(server.update(next))
  const limit = Date.now() + 15000
  for (;;) {
    const version = (await Effect.runPromise(server.pushContext)).version
    const connections = await Effect.runPromise(server.connections)
    const acked = connections.every((c) =>
      c.watches.filter((w) => w.typeUrl === typeUrl).every((w) => w.versionAcked === version),
    )
    if (version !== before && acked) return
    if (Date.now() > limit)
      throw new Error(`version ${version} of ${typeUrl} not ACKed: ${JSON.stringify(connections)}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

const channel = (): grpc.Client => {
  const client = new EchoClient(`xds:///${ECHO}:80`, grpc.credentials.createInsecure())
  clients.push(client)
  return client
}

/** Calls until `done` holds for a result, within a time limit (no blind sleeps). */
const until = async (client: grpc.Client, done: (r: { backend?: string; code?: number }) => boolean, ms = 15000) => {
  const limit = Date.now() + ms
  let last: { backend?: string; code?: number } = {}
  while (Date.now() < limit) {
    last = await callEcho(client, 3000)
    if (done(last)) return last
    await new Promise((r) => setImmediate(r))
  }
  throw new Error(`condition not reached; last result ${JSON.stringify(last)}`)
}

const count = async (client: grpc.Client, n: number, metadata?: grpc.Metadata) => {
  const counts: Record<string, number> = {}
  const batch = 50
  for (let i = 0; i < n; i += batch) {
    const results = await Promise.all(
      Array.from({ length: Math.min(batch, n - i) }, () => callEcho(client, 5000, metadata)),
    )
    for (const r of results) {
      const key = r.backend ?? `code:${r.code}`
      counts[key] = (counts[key] ?? 0) + 1
    }
  }
  return counts
}

beforeAll(async () => {
  ;[v1, v2, v1b] = await Promise.all([startEchoBackend("v1"), startEchoBackend("v2"), startEchoBackend("v1b")])
  const started = await startServer(0, base())
  scope = started.scope
  server = started.server
  process.env.GRPC_XDS_BOOTSTRAP_CONFIG = JSON.stringify({
    xds_servers: [
      { server_uri: `127.0.0.1:${server.port}`, channel_creds: [{ type: "insecure" }], server_features: ["xds_v3"] },
    ],
    node: {
      id: "sidecar~127.0.0.1~e2e.default~default.svc.cluster.local",
      locality: { region: "region1", zone: "zone1" },
      metadata: { GENERATOR: "grpc" },
    },
  })
  xds.register()
})

afterAll(async () => {
  for (const c of clients) c.close()
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await Promise.all([v1, v2, v1b].map((b) => b.close()))
})

describe("proxyless gRPC through the ADS server", () => {
  it("routes plain RPCs (no VirtualService) to the service's endpoints", async () => {
    const client = channel()
    const first = await until(client, (r) => r.backend !== undefined)
    expect(["v1", "v2"]).toContain(first.backend)
    const counts = await count(client, 100)
    expect((counts.v1 ?? 0) + (counts.v2 ?? 0)).toBe(100)
  })

  it("splits 80/20 by weight within ±5 points over 1,000 RPCs", async () => {
    await apply(
      withVs([
        {
          route: [
            { destination: { host: "echo", subset: "v1" }, weight: 80 },
            { destination: { host: "echo", subset: "v2" }, weight: 20 },
          ],
        },
      ]),
    )
    const client = channel()
    // wait until the weighted config is in force on this channel
    await until(client, (r) => r.backend !== undefined)
    const counts = await count(client, 1000)
    const share = ((counts.v1 ?? 0) / 1000) * 100
    expect(share).toBeGreaterThanOrEqual(75)
    expect(share).toBeLessThanOrEqual(85)
    expect((counts.v1 ?? 0) + (counts.v2 ?? 0)).toBe(1000)
  })

  it("routes on a header match, and a live VirtualService update reaches an existing channel", async () => {
    await apply(
      withVs([
        {
          match: [{ headers: { "x-user": { exact: "tester" } } }],
          route: [{ destination: { host: "echo", subset: "v2" } }],
        },
        { route: [{ destination: { host: "echo", subset: "v1" } }] },
      ]),
    )
    const client = channel()
    const tester = new grpc.Metadata()
    tester.set("x-user", "tester")
    await until(client, (r) => r.backend === "v1")
    const plain = await count(client, 50)
    expect(plain).toEqual({ v1: 50 })
    expect(await count(client, 50, tester)).toEqual({ v2: 50 })
    // live update: everything to v2, on the same channel
    await apply(withVs([{ route: [{ destination: { host: "echo", subset: "v2" } }] }]))
    await until(client, (r) => r.backend === "v2")
    expect(await count(client, 50)).toEqual({ v2: 50 })
  })

  it("an added endpoint starts receiving traffic; a draining one stops", async () => {
    const extra = (labels: Record<string, string>) => ({
      ...base(),
      endpoints: [...base().endpoints, endpoint(ECHO, "127.0.0.1", v1b.port, { labels: { version: "v1", ...labels } })],
      virtualServices: [
        virtualService("echo", {
          hosts: ["echo"],
          http: [{ route: [{ destination: { host: "echo", subset: "v1" } }] }],
        }),
      ],
    })
    await Effect.runPromise(server.update(extra({})))
    const client = channel()
    await until(client, (r) => r.backend === "v1b")
    await Effect.runPromise(server.update(extra({ "mesh.io/draining": "true" })))
    // once the DRAINING status arrives, v1b gets nothing
    const limit = Date.now() + 15000
    for (;;) {
      const counts = await count(client, 50)
      if (counts.v1b === undefined) break
      if (Date.now() > limit) throw new Error(`draining endpoint still used: ${JSON.stringify(counts)}`)
    }
    expect(await count(client, 100)).toEqual({ v1: 100 })
  })

  it("injects a fault abort with a gRPC status", async () => {
    await Effect.runPromise(
      server.update(
        withVs([
          {
            fault: { abort: { grpcStatus: "UNAVAILABLE", percentage: { value: 100 } } },
            // a different destination than the previous route: grpc-js-xds ignores an update whose
            // only change is a typed_per_filter_config entry added to an otherwise identical route
            route: [{ destination: { host: "echo", subset: "v2" } }],
          },
        ]),
      ),
    )
    const client = channel()
    const result = await until(client, (r) => r.code === grpc.status.UNAVAILABLE)
    expect(result.code).toBe(grpc.status.UNAVAILABLE)
  })

  it("clients keep their last config while the server is down, then reconnect", async () => {
    const input = withVs([{ route: [{ destination: { host: "echo", subset: "v2" } }] }])
    await Effect.runPromise(server.update(input))
    const client = channel()
    await until(client, (r) => r.backend === "v2")
    const port = server.port
    await Effect.runPromise(Scope.close(scope, Exit.void))
    // server gone: the channel keeps routing with its last config
    expect(await count(client, 20)).toEqual({ v2: 20 })
    const restarted = await startServer(port, input)
    scope = restarted.scope
    server = restarted.server
    const limit = Date.now() + 30000
    while ((await Effect.runPromise(server.connections)).length === 0) {
      if (Date.now() > limit) throw new Error("client did not reconnect")
      await new Promise((r) => setTimeout(r, 50))
    }
    expect(await count(client, 20)).toEqual({ v2: 20 })
  })
})
