/**
 * The layer composition `mesh-discovery discovery` launches. Loaded only when the command runs.
 */
import { Duration, Effect, Layer, Schedule } from "effect"
import { introspectionServerLayer } from "../../layers/introspection-server.js"
import { loggingLayer } from "../../layers/logging.js"
import { metricsLayer } from "../../layers/metrics.js"
import { monitoringServerLayer } from "../../layers/monitoring-server.js"
import { discoveryEnv } from "../../services/config/discovery-env.js"
import { envTableConfig } from "../../services/config/env.js"
import type { LogSettings } from "../../services/logging/options.js"
import { discoveryScopes } from "../../services/logging/scopes.js"
import { Metrics } from "../../services/metrics/metrics.js"
import { boundShutdown } from "../shared/run.js"
import type { DiscoveryArgs } from "./discovery-flags.js"

/** `meshd_uptime_seconds`, refreshed every few seconds. */
const uptimeLayer = Layer.scopedDiscard(
  Effect.gen(function* () {
    const metrics = yield* Metrics
    const uptime = metrics.gauge("meshd_uptime_seconds", "Current mesh server uptime in seconds")
    yield* Effect.sync(() => uptime.set(process.uptime())).pipe(
      Effect.repeat(Schedule.spaced("5 seconds")),
      Effect.forkScoped,
    )
  }),
)

export const runDiscovery = (args: DiscoveryArgs, logging: LogSettings) =>
  Effect.gen(function* () {
    const env = yield* envTableConfig(discoveryEnv)
    yield* boundShutdown(Duration.toMillis(args.shutdownDuration))
    const ctrlzHost = args.ctrlzAddress === "*" ? undefined : args.ctrlzAddress
    const servers = Layer.mergeAll(
      monitoringServerLayer(args.monitoringAddr),
      introspectionServerLayer({ host: ctrlzHost, port: args.ctrlzPort }),
      uptimeLayer,
    ).pipe(Layer.provide(metricsLayer("pilot-discovery")))
    yield* Effect.logInfo(
      `starting discovery: registries=${args.registries.join(",")} configDir=${args.configDir || "<none>"} cluster=${env.CLUSTER_ID}`,
    )
    return yield* Layer.launch(servers).pipe(Effect.onInterrupt(() => Effect.logInfo("discovery server stopped")))
  }).pipe(Effect.provide(loggingLayer(logging, discoveryScopes)))
