/**
 * Where the proxy reaches a mesh config extension provider (ext_authz server, access log
 * service, trace collector): the outbound cluster of its registry service. As the reference
 * does, `service` is a hostname, or `namespace/hostname` when the hostname is not unique; a
 * service the registry does not have is an error the caller reports (an ext_authz filter aimed
 * at a missing cluster would fail every check, and with `failOpen` let everything through).
 */
import { Either } from "effect"
import type { ProviderService } from "../../mesh-config/extension-providers.js"
import type { LocalSlot } from "../model/local-slot.js"
import type { PushContext } from "../model/push-context.js"
import type { Duration, GrpcService } from "../protocol/xds-types.js"
import { outboundClusterName } from "./well-known.js"

export interface ProviderCluster {
  readonly hostname: string
  readonly cluster: string
}

// Per push: a push resolves the same few providers for every workload.
const lookups: LocalSlot<Map<string, Either.Either<ProviderCluster, string>>, PushContext> = { make: () => new Map() }

const resolve = (push: PushContext, { service, port }: ProviderService): Either.Either<ProviderCluster, string> => {
  const slash = service.indexOf("/")
  const namespace = slash >= 0 ? service.slice(0, slash) : undefined
  const hostname = slash >= 0 ? service.slice(slash + 1) : service
  const namespaces = [
    ...new Set(push.input.services.filter((s) => s.hostname === hostname).map((s) => s.namespace)),
  ].sort()
  const found = namespace === undefined ? namespaces.length === 1 : namespaces.includes(namespace)
  if (found) return Either.right({ hostname, cluster: outboundClusterName(hostname, port) })
  if (namespace === undefined && namespaces.length > 1)
    return Either.left(
      `found ${hostname} in multiple namespaces ${namespaces.join(", ")}: name it as <namespace>/<hostname>`,
    )
  return Either.left(`could not find service ${service} in the service registry`)
}

/** The provider's hostname and cluster (`outbound|<port>||<hostname>`), or why there is none. */
export const providerCluster = (
  push: PushContext,
  provider: ProviderService,
): Either.Either<ProviderCluster, string> => {
  const byService = push.local(lookups)
  const key = `${provider.service}|${provider.port}`
  let result = byService.get(key)
  if (result === undefined) {
    result = resolve(push, provider)
    byService.set(key, result)
  }
  return result
}

/** A `google.protobuf.Duration` of milliseconds. */
export const durationOfMillis = (ms: number): Duration => ({
  seconds: String(Math.floor(ms / 1000)),
  nanos: (ms % 1000) * 1_000_000,
})

/** A `GrpcService` through the proxy's own gRPC client to a cluster. */
export const envoyGrpcService = (cluster: string, authority: string, timeoutMs?: number): GrpcService => ({
  envoy_grpc: { cluster_name: cluster, authority },
  ...(timeoutMs !== undefined ? { timeout: durationOfMillis(timeoutMs) } : {}),
})
