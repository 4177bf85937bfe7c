/**
 * Gateway credentials named `sds://<name>` (the reference's external SDS): the certificate
 * `<name>` comes from the mesh config's first `sds` extension provider, over gRPC through the
 * outbound cluster of the provider's service (authority its hostname), with the name sent as is.
 * Without an `sds` provider the name falls back to a credential over ADS (`kubernetes://<name>`),
 * as the reference does. A provider whose service the registry lacks cannot serve it: the
 * generator says so and the fallback applies (the reference leaves the chain without a
 * certificate, which the proxy rejects).
 */
import { Either } from "effect"
import type { SdsProvider } from "../../../mesh-config/extension-providers.js"
import type { PushContext } from "../../model/push-context.js"
import type { SdsSecretConfig } from "../../protocol/xds-types.js"
import { providerCluster } from "../provider-cluster.js"
import { adsSdsSecret } from "../sds.js"
import { SDS_CREDENTIAL_PREFIX } from "../well-known.js"

/** The credential scheme of an external SDS server. */
export const SDS_EXTERNAL_PREFIX = "sds://"

/** The mesh config's SDS provider: the first of kind `sds`, as the reference picks it. */
export const sdsProvider = (push: PushContext): SdsProvider | undefined =>
  push.options.proxy.extensionProviders.find((p): p is SdsProvider => p.kind === "sds")

/** A gateway credential by name, as the control plane serves it over ADS: `kubernetes://<name>` unless it names a scheme. */
export const credentialResourceName = (name: string): string => {
  const bare = name.startsWith(SDS_EXTERNAL_PREFIX) ? name.slice(SDS_EXTERNAL_PREFIX.length) : name
  return bare.includes("://") ? bare : `${SDS_CREDENTIAL_PREFIX}${bare}`
}

/** Where the credential `name` of a Gateway server comes from; `warn` hears why a provider cannot serve it. */
export const credentialSecret = (push: PushContext, name: string, warn: (message: string) => void): SdsSecretConfig => {
  if (!name.startsWith(SDS_EXTERNAL_PREFIX)) return adsSdsSecret(credentialResourceName(name))
  const provider = sdsProvider(push)
  if (provider === undefined) return adsSdsSecret(credentialResourceName(name))
  return Either.match(providerCluster(push, provider), {
    onLeft: (why) => {
      warn(`credential ${name}: SDS provider ${provider.name}: ${why}; served over ADS instead`)
      return adsSdsSecret(credentialResourceName(name))
    },
    onRight: ({ hostname, cluster }) => ({
      name: name.slice(SDS_EXTERNAL_PREFIX.length),
      sds_config: {
        api_config_source: {
          api_type: "GRPC",
          set_node_on_first_message_only: true,
          transport_api_version: "V3",
          grpc_services: [{ envoy_grpc: { cluster_name: cluster, authority: hostname } }],
        },
        resource_api_version: "V3",
      },
    }),
  })
}

/** The hostname of the SDS provider's service when a Gateway server of the router names an `sds://` credential. */
export const sdsProviderHost = (push: PushContext, credentialNames: ReadonlyArray<string>): string | undefined => {
  if (!credentialNames.some((n) => n.startsWith(SDS_EXTERNAL_PREFIX))) return undefined
  const provider = sdsProvider(push)
  if (provider === undefined) return undefined
  return Either.match(providerCluster(push, provider), { onLeft: () => undefined, onRight: (p) => p.hostname })
}
