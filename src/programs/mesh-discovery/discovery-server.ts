/**
 * The layer composition `mesh-discovery discovery` launches (loaded only when the command runs):
 * configuration and registries → PushContext inputs → the ADS server; the certificate authority;
 * the monitoring and introspection listeners. One Metrics registry serves them all.
 */
import { Duration, Effect, Either, Layer, Schedule } from "effect"
import { debugServerLayer } from "../../layers/debug-server.js"
import { logConfigWarnings } from "../../layers/discovery/config-warnings.js"
import { pushContextInputs } from "../../layers/discovery/push-inputs.js"
import { introspectionServerLayer } from "../../layers/introspection-server.js"
import { loggingLayer } from "../../layers/logging.js"
import { metricsLayer } from "../../layers/metrics.js"
import { discoveryInputsLayer } from "../../layers/registry/discovery-inputs.js"
import { webhookServerLayer } from "../../layers/webhook/webhook-server.js"
import { grpcOptions, xdsDiscoveryLayer } from "../../layers/xds/ads-server.js"
import { CaConfigError } from "../../services/ca/errors.js"
import { discoveryEnv } from "../../services/config/discovery-env.js"
import { envTableConfig } from "../../services/config/env.js"
import type { LogSettings } from "../../services/logging/options.js"
import { discoveryScopes } from "../../services/logging/scopes.js"
import { MeshWatcher } from "../../services/mesh-config/watcher.js"
import { Metrics } from "../../services/metrics/metrics.js"
import { listenError } from "../../services/net/listen-error.js"
import { xdsServerConfig } from "../../services/xds/config.js"
import { XdsServer } from "../../services/xds/server.js"
import { boundShutdown } from "../shared/run.js"
import {
  authenticatorsFromEnv,
  type CaWiringOptions,
  caAuthorityLayer,
  secureAdsLayer,
  secureGrpcLayer,
  servingCertLayer,
  xdsGuards,
} from "./ca-wiring.js"
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

/** Tells the user where to point a proxyless gRPC client once the ADS server is bound. */
const announceLayer = (args: DiscoveryArgs) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const xds = yield* XdsServer
      const host = args.grpcAddr.host ?? "127.0.0.1"
      yield* Effect.logInfo(
        `mesh-discovery is serving: point a proxyless gRPC client at xds:///<host>:<port> with GRPC_XDS_BOOTSTRAP naming ${host}:${xds.port} (insecure channel creds, node metadata GENERATOR=grpc)`,
      )
    }),
  )

export const runDiscovery = (args: DiscoveryArgs, logging: LogSettings) =>
  Effect.gen(function* () {
    const env = yield* envTableConfig(discoveryEnv)
    yield* boundShutdown(Duration.toMillis(args.shutdownDuration))
    yield* Effect.logInfo(
      `starting discovery: registries=${args.registries.join(",")} configDir=${args.configDir || "<none>"} cluster=${args.clusterID}`,
    )

    const inputs = discoveryInputsLayer({
      configDir: args.configDir,
      meshConfig: args.meshConfig,
      networksConfig: args.networksConfig,
      registries: args.registries,
      orchconfig: args.orchconfig,
      env: { ...env, CLUSTER_ID: args.clusterID },
    })
    // The generators read the mesh config's auto mTLS switch, trust domain and root namespace;
    // the CA issues identities in its trust domain; xDS authorization accepts it and its aliases.
    const wired = Layer.unwrapEffect(
      Effect.map(MeshWatcher, (watcher) => watcher.config).pipe(
        Effect.flatten,
        Effect.map((mesh) => {
          const xdsConfig = xdsServerConfig(args, env, mesh)
          const options: CaWiringOptions = {
            secureGrpcAddr: args.secureGRPCAddr,
            namespace: args.namespace,
            trustDomain: mesh.trustDomain,
            trustDomainAliases: mesh.trustDomainAliases,
            cipherSuites: args.tlsCipherSuites,
            tlsCertFile: args.tlsCertFile,
            tlsKeyFile: args.tlsKeyFile,
            caCertFile: args.caCertFile,
            serverOptions: grpcOptions(xdsConfig),
          }
          const authenticators = authenticatorsFromEnv(env, options)
          if (Either.isLeft(authenticators)) return Layer.fail(new CaConfigError({ reason: authenticators.left }))
          const guards = xdsGuards(env, authenticators.right, options)
          const ca = caAuthorityLayer(env, options)
          // The inputs' cross-resource warnings (undefined subsets) are logged as they appear.
          const inputs = pushContextInputs.pipe(logConfigWarnings(xdsConfig.pushContext.domainSuffix))
          const xds = xdsDiscoveryLayer(xdsConfig, inputs, { plaintextGuard: guards.plaintext }).pipe(
            // The user set the plaintext ADS listener's address with --grpcAddr.
            Layer.mapError((error) =>
              error.bindFailed === true ? listenError("--grpcAddr", args.grpcAddr, error.cause) : error,
            ),
          )
          // The secure listener serves ADS (always) and the CA service (ENABLE_CA_SERVER).
          const secure = secureGrpcLayer(env, options, secureAdsLayer(guards.secure))
          // Webhooks on --httpsAddr, serving the same certificate as the secure listener.
          const webhook = webhookServerLayer({ address: args.httpsAddr, injectEnabled: env.INJECT_ENABLED })
          const cert = Layer.provideMerge(servingCertLayer(env, options), Layer.merge(ca, xds))
          // The webhook listener binds after the secure one: a bind failure of one must not
          // interrupt the other mid-bind (an interrupted grpc-js bind hangs the shutdown).
          return Layer.provideMerge(Layer.provideMerge(webhook, secure), cert)
        }),
      ),
    )
    const ctrlzHost = args.ctrlzAddress === "*" ? undefined : args.ctrlzAddress
    // Monitoring (/metrics, /version), /ready and the debug interface on --httpAddr and --monitoringAddr.
    const http = debugServerLayer({
      httpAddr: args.httpAddr,
      monitoringAddr: args.monitoringAddr,
      enableDebugOnHttp: env.ENABLE_DEBUG_ON_HTTP,
      adminEndpoints: env.UNSAFE_ENABLE_ADMIN_ENDPOINTS,
      metricsLocalhostOnly: env.METRICS_LOCALHOST_ACCESS_ONLY,
    })
    const servers = Layer.mergeAll(
      introspectionServerLayer({ host: ctrlzHost, port: args.ctrlzPort }),
      uptimeLayer,
      Layer.provideMerge(Layer.merge(announceLayer(args), http), wired),
    ).pipe(Layer.provide(inputs), Layer.provide(metricsLayer("pilot-discovery")))

    return yield* Layer.launch(servers).pipe(Effect.onInterrupt(() => Effect.logInfo("discovery server stopped")))
  }).pipe(Effect.provide(loggingLayer(logging, discoveryScopes)))
