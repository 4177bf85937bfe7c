/**
 * The `discovery` flags (and the mesh config the inputs read) as the config services of the
 * subsystems; each reads its own variables from the environment.
 */
import { Effect, Layer } from "effect"
import { grpcOptions } from "../../layers/xds/ads-server.js"
import { CaConfig } from "../../services/ca/config.js"
import { MonitoringConfig, WebhookConfig } from "../../services/config/discovery-config.js"
import { MeshWatcher } from "../../services/mesh-config/watcher.js"
import { XdsConfig, xdsServerConfigOf } from "../../services/xds/config.js"
import type { DiscoveryArgs } from "./discovery-flags.js"

const meshConfig = Effect.flatMap(MeshWatcher, (watcher) => watcher.config)

export const discoveryConfigLayer = (args: DiscoveryArgs) => {
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
    })),
  )
  // The CA issues identities in the mesh's trust domain; xDS authorization accepts its aliases;
  // the secure listener serves ADS with the plaintext listener's gRPC options.
  const ca = CaConfig.layerFromEnv(
    Effect.gen(function* () {
      const mesh = yield* meshConfig
      return {
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
  })
  const webhook = WebhookConfig.layerFromEnv({ httpsAddr: args.httpsAddr })
  return Layer.mergeAll(Layer.provideMerge(ca, xds), monitoring, webhook)
}
