/**
 * What ADS streams sending distinct resource names leave behind once they end (issue 34
 * finding 1): nothing. Before the bounds, the resolved sets a push context memoised for every
 * distinct request (keyed by the names joined, with a reason per missing name) stayed until the
 * config changed: about 1 GB after this attack (41 MB before it), through a full GC. Measured
 * in this process after full collections, so garbage V8 has not collected yet does not count.
 */

import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { makeXdsServer } from "../../../src/layers/xds/ads-server.js"
import { plainToStruct } from "../../../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../../../src/services/xds/protocol/type-urls.js"
import { defaultXdsServerConfig } from "../../../src/services/xds/server.js"
import { weightedMesh } from "../../fixtures/xds/mesh.js"
import { poll } from "../../support/metrics.js"
import { type AdsMethod, openRawStream, rawSession } from "../../support/raw-ads.js"

// A full collection on demand: the flag makes `gc` available to contexts created after it.
setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void
const heapUsedMb = () => {
  for (let i = 0; i < 3; i++) gc()
  return process.memoryUsage().heapUsed / (1024 * 1024)
}

const MB = 1024 * 1024
/** What the attack may leave in the heap once its streams ended (it sends about 180 MB). */
const LEFT_MB = 20
const mesh = weightedMesh({ address: "10.0.0.1", port: 8080 }, { address: "10.0.0.2", port: 8080 })
const node = (name: string) => ({
  id: `sidecar~10.0.0.9~${name}.default~default.svc.cluster.local`,
  metadata: plainToStruct({ GENERATOR: "grpc" }),
})
/** 1 MB of names unique to `tag`, `count` of them. */
const namesOf = (tag: string, count: number) => {
  const pad = "n".repeat(Math.floor(MB / count) - tag.length - 16)
  return Array.from({ length: count }, (_, i) => `${tag}-${i}-${pad}`)
}
const TYPES = [TypeUrl.Endpoint, TypeUrl.Listener, TypeUrl.Route, TypeUrl.Cluster]

/** Four callers, SotW and delta, each opening streams that send 1 MB requests of new names. */
const attack = (port: number) =>
  Promise.all(
    [0, 1, 2, 3].map(async (k) => {
      const session = rawSession(port, { reads: true })
      const method: AdsMethod = k % 2 === 0 ? "StreamAggregatedResources" : "DeltaAggregatedResources"
      for (let opened = 0; opened < 3; opened++) {
        const raw = openRawStream(session, method)
        let ended = false
        void raw.closed.then(() => {
          ended = true
        })
        for (let i = 0; i < 15 && !ended; i++) {
          const names = namesOf(`s${k}-o${opened}-q${i}`, i % 2 === 0 ? 20_000 : 2000)
          const typeUrl = TYPES[i % TYPES.length]!
          const request =
            method === "StreamAggregatedResources"
              ? { node: node(`flood-${k}`), type_url: typeUrl, resource_names: names }
              : { node: node(`flood-${k}`), type_url: typeUrl, resource_names_subscribe: names }
          if (!(await raw.send(request))) break
        }
        if (!raw.stream.closed) raw.stream.close()
        await raw.closed
      }
      session.destroy()
    }),
  )

describe("ADS server: names of streams that ended", () => {
  it.scopedLive(
    "are released: the heap comes back to where it was, also across a config change",
    () =>
      Effect.gen(function* () {
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
            shutdownDuration: Duration.seconds(1),
          },
          mesh,
        )
        const before = heapUsedMb()
        // A push in the middle: what it looks up for the streams' names goes with them too.
        yield* Effect.fork(
          Effect.zipRight(
            Effect.sleep("1 second"),
            server.update(weightedMesh({ address: "10.0.0.3", port: 8080 }, { address: "10.0.0.2", port: 8080 })),
          ),
        )
        yield* Effect.promise(() => attack(server.port))
        yield* poll(server.connections, (cs) => cs.length === 0, "20 seconds")
        const after = heapUsedMb()
        expect(after - before, `heap before ${before.toFixed(1)} MB, after ${after.toFixed(1)} MB`).toBeLessThan(
          LEFT_MB,
        )
      }).pipe(Effect.provide(metricsLayer("test"))),
    60_000,
  )
})
