/**
 * The handlers of `/debug/ui` (the mesh page) and `/debug/ui/state` (its JSON), served on the
 * debug listener behind its loopback rule (debug-server.ts). They gather what the model needs
 * (services/debug/mesh-ui-model.ts): the xDS server's connections and push statistics, the
 * config store's refused resources, the metric series `/metrics` exports, and the orchestrator's
 * state. The API server is probed (`GET /version`) every `PROBE_INTERVAL` in the background, so
 * a page polling twice a second costs the orchestrator nothing.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Duration, Effect, Option, Ref, type Scope } from "effect"
import { buildInfo } from "../services/build-info.js"
import { ConfigStore } from "../services/config-store/config-store.js"
import {
  type MetricReadings,
  type MetricValue,
  meshUiModel,
  type OrchestratorFacts,
  UI_METRICS,
  uiQueryOf,
} from "../services/debug/mesh-ui-model.js"
import { meshUiPage } from "../services/debug/mesh-ui-page.js"
import { configWarnings } from "../services/debug/views.js"
import { Metrics } from "../services/metrics/metrics.js"
import { LeaderElection } from "../services/orchestrator/leader.js"
import { LocalCluster } from "../services/orchestrator/local-cluster.js"
import { ServiceRegistry } from "../services/registry/registry.js"
import type { PushContext } from "../services/xds/model/push-context.js"
import { XdsServer } from "../services/xds/server.js"

const PROBE_INTERVAL = Duration.seconds(10)
const PROBE_TIMEOUT = Duration.seconds(5)

type Probe = Pick<OrchestratorFacts, "reachable" | "error" | "checkedAt">

export interface MeshUiHandlers {
  readonly page: Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>
  readonly state: Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>
}

export const makeMeshUiHandlers: Effect.Effect<
  MeshUiHandlers,
  never,
  Metrics | XdsServer | ConfigStore | ServiceRegistry | Scope.Scope
> = Effect.gen(function* () {
  const metrics = yield* Metrics
  const xds = yield* XdsServer
  const store = yield* ConfigStore
  const cluster = Option.flatten(yield* Effect.serviceOption(LocalCluster))
  const leader = yield* Effect.serviceOption(LeaderElection)

  const configSynced = yield* Ref.make(false)
  const registriesSynced = yield* Ref.make(false)
  yield* Effect.forkScoped(Effect.zipRight(store.awaitSynced, Ref.set(configSynced, true)))
  yield* Effect.forkScoped(
    Effect.zipRight(
      Effect.flatMap(ServiceRegistry, (r) => r.awaitSynced),
      Ref.set(registriesSynced, true),
    ),
  )

  const probe = yield* Ref.make<Probe>({})
  if (Option.isSome(cluster)) {
    const client = cluster.value.client
    yield* client.request({ method: "GET", path: "/version" }).pipe(
      Effect.timeoutFail({
        duration: PROBE_TIMEOUT,
        onTimeout: () => ({ message: `no answer within ${Duration.format(PROBE_TIMEOUT)}` }),
      }),
      Effect.either,
      Effect.flatMap((result) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Ref.set(probe, {
            reachable: result._tag === "Right",
            ...(result._tag === "Left" ? { error: result.left.message.slice(0, 512) } : {}),
            checkedAt: new Date(now).toISOString(),
          }),
        ),
      ),
      Effect.zipLeft(Effect.sleep(PROBE_INTERVAL)),
      Effect.forever,
      Effect.forkScoped,
    )
  }

  // The warnings of one PushContext are computed once, however often the page polls.
  const warningsOf = new WeakMap<PushContext, ReturnType<typeof configWarnings>>()
  const warnings = (push: PushContext) => {
    const known = warningsOf.get(push)
    if (known !== undefined) return known
    const fresh = configWarnings(push)
    warningsOf.set(push, fresh)
    return fresh
  }

  const readings = Effect.promise(async (): Promise<MetricReadings> => {
    const out: Record<string, ReadonlyArray<MetricValue>> = {}
    for (const name of UI_METRICS) {
      const metric = metrics.registry.getSingleMetric(name)
      if (metric !== undefined) out[name] = (await metric.get()).values as ReadonlyArray<MetricValue>
    }
    return out
  })

  const model = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const query = uiQueryOf(new URL(request.url, "http://localhost").searchParams)
    const leadership = Option.isSome(leader)
      ? { identity: leader.value.identity, isLeader: yield* leader.value.isLeader }
      : undefined
    return meshUiModel({
      now: yield* Clock.currentTimeMillis,
      version: buildInfo.version,
      connections: yield* xds.connections,
      pushStats: yield* xds.pushStats,
      configWarnings: warnings(yield* xds.pushContext),
      refused: (yield* store.snapshot).issues,
      metrics: yield* readings,
      orchestrator: {
        server: Option.isSome(cluster) ? cluster.value.client.server : undefined,
        ...(yield* Ref.get(probe)),
        registriesSynced: yield* Ref.get(registriesSynced),
        configSynced: yield* Ref.get(configSynced),
        leader: leadership,
      },
      query,
    })
  })

  return {
    page: Effect.map(model, (m) => HttpServerResponse.html(meshUiPage(m))),
    state: Effect.map(model, (m) => HttpServerResponse.unsafeJson(m, { headers: { "cache-control": "no-store" } })),
  }
})
