/**
 * The layer composition `mesh-discovery discovery` launches (loaded only when the command runs):
 * configuration and registries → PushContext inputs → the ADS server; the certificate authority
 * and the secure gRPC listener; the webhook, monitoring and introspection listeners; on the
 * orchestrator, WorkloadEntry auto-registration and the controllers that write while leader. One
 * Metrics registry serves them all.
 */

import { Duration, Effect, Layer } from "effect"
import {
  layerAuthenticators as caAuthenticatorsLayer,
  layerXdsGuards as xdsGuardsLayer,
} from "../../layers/ca/callers.js"
import { layer as servingCertLayer } from "../../layers/ca/serving-cert.js"
import * as DebugServer from "../../layers/debug-server.js"
import * as Introspection from "../../layers/introspection-server.js"
import { layer as jwksResolverLayer } from "../../layers/jwks/resolver.js"
import { layer as loggingLayer } from "../../layers/logging.js"
import * as HeapGrowth from "../../layers/memory/heap-growth.js"
import { layer as metricsLayer } from "../../layers/metrics.js"
import * as Webhook from "../../layers/webhook/webhook-server.js"
import * as Xds from "../../layers/xds/layer.js"
import { discoveryEnv } from "../../services/config/discovery-env.js"
import { envTableConfig } from "../../services/config/env.js"
import { ShutdownDeadline } from "../../services/lifecycle/shutdown-deadline.js"
import type { LogSettings } from "../../services/logging/options.js"
import { discoveryScopes } from "../../services/logging/scopes.js"
import { boundShutdown } from "../shared/run.js"
import { layerAuthority, layerProxyConnections } from "./cluster-variants.js"
import { layerControllers, layerLeaderElection } from "./controllers.js"
import { discoveryConfigLayer, discoverySettingsLayer } from "./discovery-config.js"
import type { DiscoveryArgs } from "./discovery-flags.js"
import { layer as discoveryInputsLayer } from "./discovery-inputs.js"
import { layerAds as secureAdsLayer, layer as secureGrpcLayer } from "./secure-grpc.js"

export const runDiscovery = (args: DiscoveryArgs, logging: LogSettings) =>
  Effect.gen(function* () {
    // The whole table first: every bad variable is reported, not only those of one subsystem.
    const env = yield* envTableConfig(discoveryEnv)
    // One countdown for every listener: together they stop within --shutdownDuration.
    const deadline = yield* boundShutdown(Duration.toMillis(args.shutdownDuration))
    yield* Effect.logInfo(
      `starting discovery: registries=${args.registries.join(",")} configDir=${args.configDir || "<none>"} cluster=${args.clusterID}`,
    )

    // Each layer below provides what the ones above it need.
    const grpc = secureGrpcLayer(secureAdsLayer).pipe(
      Layer.provideMerge(servingCertLayer),
      Layer.provideMerge(Layer.merge(layerAuthority, Xds.layer)),
      Layer.provideMerge(layerProxyConnections),
      Layer.provideMerge(xdsGuardsLayer),
      Layer.provideMerge(caAuthenticatorsLayer),
    )
    const servers = Layer.mergeAll(
      Webhook.layer,
      DebugServer.layer,
      DebugServer.layerUptime,
      Introspection.layer,
      HeapGrowth.layer,
      Xds.layerAnnounce,
      layerControllers,
    ).pipe(
      Layer.provide(grpc),
      // One election for the controllers and for the mesh page (/debug/ui), which shows it.
      Layer.provide(layerLeaderElection),
      Layer.provide(jwksResolverLayer),
      Layer.provide(discoveryConfigLayer(args, env)),
      Layer.provide(
        discoveryInputsLayer({
          configDir: args.configDir,
          meshConfig: args.meshConfig,
          networksConfig: args.networksConfig,
          registries: args.registries,
          orchconfig: args.orchconfig,
          namespace: args.namespace,
          domain: args.domain,
          orchestratorApiQPS: args.orchestratorApiQPS,
          orchestratorApiBurst: args.orchestratorApiBurst,
        }),
      ),
      // Every config Tag from the one parse above: no variable is read from the environment twice.
      Layer.provide(discoverySettingsLayer(args, env)),
      Layer.provide(metricsLayer("pilot-discovery")),
    )

    return yield* Layer.launch(servers).pipe(
      Effect.provideService(ShutdownDeadline, deadline),
      Effect.onInterrupt(() => Effect.logInfo("discovery server stopped")),
    )
  }).pipe(Effect.provide(loggingLayer(logging, discoveryScopes)))
