/**
 * A client asking for names the mesh does not know (a `host:port` no service has, a subset no
 * DestinationRule defines) is only told DEADLINE_EXCEEDED by its library: the server records
 * why per connection, shows it in `/debug/syncz` (`warnings`) and says it at debug in `ads`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, HashMap, Logger, LogLevel } from "effect"
import { layer as metricsLayer } from "../../../src/layers/metrics.js"
import { makeXdsServer } from "../../../src/layers/xds/ads-server.js"
import { makeAdsClient } from "../../../src/layers/xds-client/ads-client.js"
import { syncz } from "../../../src/services/debug/views.js"
import { clusterName } from "../../../src/services/xds/grpcgen/grpc-gen.js"
import { plainToStruct } from "../../../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../../../src/services/xds/protocol/type-urls.js"
import { defaultXdsServerConfig } from "../../../src/services/xds/server.js"
import { ECHO, endpoint, service, weightedMesh } from "../../fixtures/xds/mesh.js"
import { poll } from "../../support/metrics.js"

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
const WAIT = "10 seconds"
const LISTENER = `${ECHO}:80`
const NOWHERE = "nowhere.default.svc.cluster.local"
const UNKNOWN_LISTENER = `${NOWHERE}:80`
const V3 = clusterName(ECHO, 80, "v3")

const LISTENER_NOT_FOUND = `requested listener ${UNKNOWN_LISTENER} not found: no service has host ${NOWHERE}`
const PORT_NOT_FOUND = `requested listener ${ECHO}:81 not found: service ${ECHO} has no port 81 (ports: 80)`
const SUBSET_NOT_FOUND = `requested cluster ${V3} not found: DestinationRule default/echo for host ${ECHO} defines no subset "v3" (subsets: v1, v2)`

/** A logger that keeps each line with its `scope` annotation. */
const collecting = () => {
  const lines: Array<{ readonly scope: string; readonly level: string; readonly text: string }> = []
  const logger = Logger.make(({ message, annotations, logLevel }) => {
    const scope = HashMap.get(annotations, "scope")
    lines.push({
      scope: scope._tag === "Some" ? String(scope.value) : "",
      level: logLevel.label,
      text: String(Array.isArray(message) ? message.join(" ") : message),
    })
  })
  return { lines, logger }
}

describe("requested resources that do not exist", () => {
  it.scopedLive("SotW: syncz shows why per connection, the ads scope says it once at debug, and it clears", () =>
    Effect.gen(function* () {
      const { lines, logger } = collecting()
      const server = yield* makeXdsServer(config, mesh).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
        Logger.withMinimumLogLevel(LogLevel.Debug),
      )
      const c = yield* makeAdsClient({ address: `127.0.0.1:${server.port}`, mode: "sotw", node })
      yield* c.subscribe(TypeUrl.Listener, [LISTENER, UNKNOWN_LISTENER, `${ECHO}:81`])
      yield* c.subscribe(TypeUrl.Cluster, [clusterName(ECHO, 80, "v1"), V3])
      yield* c.waitFor(
        (s) =>
          (s.types.get(TypeUrl.Listener)?.resources.has(LISTENER) ?? false) &&
          (s.types.get(TypeUrl.Cluster)?.resources.size ?? 0) === 1,
        WAIT,
      )
      const rows = syncz(
        yield* poll(
          server.connections,
          (cs) => cs[0]?.watches.length === 2 && cs[0]!.watches.every((w) => w.warnings !== undefined),
          WAIT,
        ),
      )
      expect(rows.find((r) => r.type === "lds")!.warnings).toEqual([PORT_NOT_FOUND, LISTENER_NOT_FOUND])
      expect(rows.find((r) => r.type === "cds")!.warnings).toEqual([SUBSET_NOT_FOUND])
      expect(rows.every((r) => r.proxy === node.id && r.lastError === "")).toBe(true)

      // The service appears: its listener is served and the warning goes; the others stay.
      yield* server.update({
        ...mesh,
        services: [...mesh.services, service(NOWHERE)],
        endpoints: [...mesh.endpoints, endpoint(NOWHERE, "10.0.0.5", 8080)],
      })
      yield* c.waitFor((s) => s.types.get(TypeUrl.Listener)?.resources.has(UNKNOWN_LISTENER) ?? false, WAIT)
      const after = yield* poll(
        server.connections,
        (cs) => cs[0]?.watches.find((w) => w.typeUrl === TypeUrl.Listener)?.warnings?.length === 1,
        WAIT,
      )
      expect(syncz(after).find((r) => r.type === "lds")!.warnings).toEqual([PORT_NOT_FOUND])

      const said = (text: string) => lines.filter((l) => l.text.startsWith(text))
      for (const text of [LISTENER_NOT_FOUND, PORT_NOT_FOUND, SUBSET_NOT_FOUND]) {
        expect(said(text)).toHaveLength(1)
        expect(said(text)[0]).toMatchObject({ scope: "ads", level: "DEBUG" })
      }
    }).pipe(Effect.provide(metricsLayer("test"))),
  )

  it.scopedLive("delta: a subscribed name without a resource shows in the connection's status", () =>
    Effect.gen(function* () {
      const server = yield* makeXdsServer(config, mesh)
      const c = yield* makeAdsClient({ address: `127.0.0.1:${server.port}`, mode: "delta", node })
      yield* c.subscribe(TypeUrl.Listener, [LISTENER, UNKNOWN_LISTENER])
      yield* c.waitFor((s) => s.types.get(TypeUrl.Listener)?.resources.has(LISTENER) ?? false, WAIT)
      const cs = yield* poll(server.connections, (cs) => cs[0]?.watches[0]?.warnings !== undefined, WAIT)
      expect(syncz(cs)[0]).toMatchObject({ delta: true, type: "lds", warnings: [LISTENER_NOT_FOUND] })
    }).pipe(Effect.provide(metricsLayer("test"))),
  )
})
