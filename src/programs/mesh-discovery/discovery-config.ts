/**
 * The `discovery` flags (and the mesh config the inputs read) as the config services of the
 * subsystems; each reads its own variables from the environment.
 */
import { Effect, Layer, Option } from "effect"
import { makePodLocator } from "../../layers/ca/orchestrator/pod-locator.js"
import { makeTokenReviewAuthenticator } from "../../layers/ca/orchestrator/token-review.js"
import { grpcOptions } from "../../layers/xds/ads-server.js"
import { CaConfig } from "../../services/ca/config.js"
import { acceptedAudiences } from "../../services/ca/jwt.js"
import { MonitoringConfig, WebhookConfig } from "../../services/config/discovery-config.js"
import type { discoveryEnv } from "../../services/config/discovery-env.js"
import type { EnvValues } from "../../services/config/env.js"
import { InjectionWebhookConfig } from "../../services/injection/webhook-config.js"
import { MeshWatcher } from "../../services/mesh-config/watcher.js"
import { LocalCluster, withCluster } from "../../services/orchestrator/local-cluster.js"
import { XdsConfig, xdsServerConfigOf } from "../../services/xds/config.js"
import { proxyMeshOf } from "../../services/xds/model/proxy-mesh.js"
import type { DiscoveryArgs } from "./discovery-flags.js"

const meshConfig = Effect.flatMap(MeshWatcher, (watcher) => watcher.config)

/** `env`: the whole table as start-up parsed it (read once; not parsed again here). */
export const discoveryConfigLayer = (
  args: DiscoveryArgs,
  env: Pick<EnvValues<typeof discoveryEnv>, "TOKEN_AUDIENCES" | "AUDIENCE" | "MESH_WATCH_NAMESPACE">,
) => {
  // The generators read the mesh config's auto mTLS switch, trust domain and root namespace.
  const xds = XdsConfig.layerFromEnv(
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
  const ca = CaConfig.layerFromEnv(
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
  const monitoring = MonitoringConfig.layerFromEnv({
    httpAddr: args.httpAddr,
    monitoringAddr: args.monitoringAddr,
    introspectionAddr: { host: args.ctrlzAddress === "*" ? undefined : args.ctrlzAddress, port: args.ctrlzPort },
    profile: args.profile,
  })
  const webhook = WebhookConfig.layerFromEnv({ httpsAddr: args.httpsAddr })
  const injection = InjectionWebhookConfig.layerFromEnv({ namespace: args.namespace })
  return Layer.mergeAll(Layer.provideMerge(ca, xds), monitoring, webhook, injection)
}
