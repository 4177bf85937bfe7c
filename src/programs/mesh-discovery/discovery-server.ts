/**
 * The layer composition `mesh-discovery discovery` launches (loaded only when the command runs):
 * configuration and registries → PushContext inputs → the ADS server; the certificate authority
 * and the secure gRPC listener; the webhook, monitoring and introspection listeners. One Metrics
 * registry serves them all.
 */
import { Duration, Effect, Layer } from "effect"
import * as Authority from "../../layers/ca/authority.js"
import {
  layerAuthenticators as caAuthenticatorsLayer,
  layerXdsGuards as xdsGuardsLayer,
} from "../../layers/ca/callers.js"
import { layerAds as secureAdsLayer, layer as secureGrpcLayer } from "../../layers/ca/secure-grpc.js"
import { layer as servingCertLayer } from "../../layers/ca/serving-cert.js"
import * as DebugServer from "../../layers/debug-server.js"
import * as Introspection from "../../layers/introspection-server.js"
import { layer as loggingLayer } from "../../layers/logging.js"
import { layer as metricsLayer } from "../../layers/metrics.js"
import { layer as discoveryInputsLayer } from "../../layers/registry/discovery-inputs.js"
import * as Webhook from "../../layers/webhook/webhook-server.js"
import * as Xds from "../../layers/xds/layer.js"
import { discoveryEnv } from "../../services/config/discovery-env.js"
import { envTableConfig } from "../../services/config/env.js"
import type { LogSettings } from "../../services/logging/options.js"
import { discoveryScopes } from "../../services/logging/scopes.js"
import { boundShutdown } from "../shared/run.js"
import { discoveryConfigLayer } from "./discovery-config.js"
import type { DiscoveryArgs } from "./discovery-flags.js"

export const runDiscovery = (args: DiscoveryArgs, logging: LogSettings) =>
  Effect.gen(function* () {
    // The whole table first: every bad variable is reported, not only those of one subsystem.
    const env = yield* envTableConfig(discoveryEnv)
    yield* boundShutdown(Duration.toMillis(args.shutdownDuration))
    yield* Effect.logInfo(
      `starting discovery: registries=${args.registries.join(",")} configDir=${args.configDir || "<none>"} cluster=${args.clusterID}`,
    )

    // Each layer below provides what the ones above it need.
    const grpc = secureGrpcLayer(secureAdsLayer).pipe(
      Layer.provideMerge(servingCertLayer),
      Layer.provideMerge(Layer.merge(Authority.layer, Xds.layer)),
      Layer.provideMerge(xdsGuardsLayer),
      Layer.provideMerge(caAuthenticatorsLayer),
    )
    const servers = Layer.mergeAll(
      Webhook.layer,
      DebugServer.layer,
      DebugServer.layerUptime,
      Introspection.layer,
      Xds.layerAnnounce,
    ).pipe(
      Layer.provide(grpc),
      Layer.provide(discoveryConfigLayer(args)),
      Layer.provide(
        discoveryInputsLayer({
          configDir: args.configDir,
          meshConfig: args.meshConfig,
          networksConfig: args.networksConfig,
          registries: args.registries,
          orchconfig: args.orchconfig,
          env: { ...env, CLUSTER_ID: args.clusterID },
        }),
      ),
      Layer.provide(metricsLayer("pilot-discovery")),
    )

    return yield* Layer.launch(servers).pipe(Effect.onInterrupt(() => Effect.logInfo("discovery server stopped")))
  }).pipe(Effect.provide(loggingLayer(logging, discoveryScopes)))
