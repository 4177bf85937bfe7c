/**
 * The `discovery` flags and the environment as the config services of mesh-discovery's
 * subsystems. The whole env table is parsed once at start (discovery-server.ts); every Tag here
 * takes its slice from that parse (`layerFromValues`), so no variable is read twice per start.
 */
import { Effect, Layer, Option } from "effect"
import { makePodLocator } from "../../layers/ca/orchestrator/pod-locator.js"
import { makeTokenReviewAuthenticator } from "../../layers/ca/orchestrator/token-review.js"
import { grpcOptions } from "../../layers/xds/ads-server.js"
import { CaConfig } from "../../services/ca/config.js"
import { acceptedAudiences } from "../../services/ca/jwt.js"
import {
  ControllersConfig,
  MonitoringConfig,
  RegistryInputsConfig,
  WebhookConfig,
} from "../../services/config/discovery-config.js"
import type { discoveryEnv } from "../../services/config/discovery-env.js"
import type { EnvValues } from "../../services/config/env.js"
import { GatewayApiSettings } from "../../services/gateway-api/push-view.js"
import { IngressPushSettings } from "../../services/ingress/push-view.js"
import { InjectionWebhookConfig } from "../../services/injection/webhook-config.js"
import { JwksConfig } from "../../services/jwks/config.js"
import { MemoryConfig } from "../../services/memory/memory-config.js"
import { MeshWatcher } from "../../services/mesh-config/watcher.js"
import { LocalCluster, withCluster } from "../../services/orchestrator/local-cluster.js"
import { XdsConfig, xdsServerConfigOf } from "../../services/xds/config.js"
import { proxyMeshOf } from "../../services/xds/model/proxy-mesh.js"
import type { DiscoveryArgs } from "./discovery-flags.js"

/** The whole table as start-up parsed it. */
export type DiscoveryEnv = EnvValues<typeof discoveryEnv>

/**
 * The config Tags that need nothing at run time: the listeners', the inputs' (registries, config
 * store, mesh config), the controllers', the JWKS resolver's, the memory governor's and the
 * Gateway-API and Ingress push settings.
 */
export const discoverySettingsLayer = (args: DiscoveryArgs, env: DiscoveryEnv) =>
  Layer.mergeAll(
    MonitoringConfig.layerFromValues(env, {
      httpAddr: args.httpAddr,
      monitoringAddr: args.monitoringAddr,
      introspectionAddr: { host: args.ctrlzAddress === "*" ? undefined : args.ctrlzAddress, port: args.ctrlzPort },
      profile: args.profile,
    }),
    WebhookConfig.layerFromValues(env, { httpsAddr: args.httpsAddr }),
    InjectionWebhookConfig.layerFromValues(env, { namespace: args.namespace }),
    // CLUSTER_ID is the --clusterID flag's value (the flag defaults to the variable).
    RegistryInputsConfig.layerFromValues({ ...env, CLUSTER_ID: args.clusterID }),
    ControllersConfig.layerFromValues(env, { namespace: args.namespace, domain: args.domain }),
    // RequestAuthentication key sets fetched by the control plane (PILOT_JWT_ENABLE_REMOTE_JWKS).
    JwksConfig.layerFromValues(env),
    MemoryConfig.layerFromValues(env),
    Layer.succeed(GatewayApiSettings, {
      enabled: env.PILOT_ENABLE_GATEWAY_API,
      controllerName: env.PILOT_GATEWAY_API_CONTROLLER_NAME,
      defaultClassName: env.PILOT_GATEWAY_API_DEFAULT_GATEWAYCLASS_NAME,
      domainSuffix: args.domain,
      eastWestClass: env.AMBIENT_ENABLE_MULTI_NETWORK,
      inferenceExtension: env.ENABLE_GATEWAY_API_INFERENCE_EXTENSION,
    }),
    // Gateways generated for Ingresses go to the control plane's namespace.
    Layer.succeed(IngressPushSettings, { systemNamespace: args.namespace, domainSuffix: args.domain }),
  )

const meshConfig = Effect.flatMap(MeshWatcher, (watcher) => watcher.config)

/** `XdsConfig` and `CaConfig`, which also read the mesh config and, on the orchestrator, the LocalCluster. */
export const discoveryConfigLayer = (args: DiscoveryArgs, env: DiscoveryEnv) => {
  // The generators read the mesh config's auto mTLS switch, trust domain and root namespace.
  const xds = XdsConfig.layerFromValues(
    env,
    Effect.map(meshConfig, (mesh) => ({
      grpcAddr: args.grpcAddr,
      keepaliveInterval: args.keepaliveInterval,
      keepaliveTimeout: args.keepaliveTimeout,
      keepaliveMaxServerConnectionAge: args.keepaliveMaxServerConnectionAge,
      shutdownDuration: args.shutdownDuration,
      domain: args.domain,
      enableAutoMtls: mesh.enableAutoMtls,
      trustDomain: mesh.trustDomain,
      rootNamespace: mesh.rootNamespace,
      proxyMesh: proxyMeshOf(mesh),
    })),
  )
  // The CA issues identities in the mesh's trust domain; xDS authorization accepts its aliases;
  // the secure listener serves ADS with the plaintext listener's gRPC options.
  const ca = CaConfig.layerFromValues(
    env,
    Effect.gen(function* () {
      const mesh = yield* meshConfig
      const local = yield* LocalCluster
      // On the orchestrator: tokens are reviewed by the API server (TOKEN_AUDIENCES) and node
      // agents may act for pods on their node (CA_TRUSTED_NODE_ACCOUNTS).
      const orchestrator = Option.isSome(local)
        ? yield* Effect.gen(function* () {
            return {
              extraAuthenticators: [
                yield* makeTokenReviewAuthenticator({
                  audiences: acceptedAudiences(env.TOKEN_AUDIENCES, env.AUDIENCE),
                  trustDomain: mesh.trustDomain,
                }),
              ],
              podLocator: yield* makePodLocator({ namespace: env.MESH_WATCH_NAMESPACE }),
            }
          }).pipe(withCluster(local.value))
        : {}
      return {
        ...orchestrator,
        secureGrpcAddr: args.secureGRPCAddr,
        namespace: args.namespace,
        trustDomain: mesh.trustDomain,
        trustDomainAliases: mesh.trustDomainAliases,
        cipherSuites: args.tlsCipherSuites,
        tlsCertFile: args.tlsCertFile,
        tlsKeyFile: args.tlsKeyFile,
        caCertFile: args.caCertFile,
        serverOptions: grpcOptions(xdsServerConfigOf(yield* XdsConfig)),
      }
    }),
  )
  return Layer.provideMerge(ca, xds)
}
