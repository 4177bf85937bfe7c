/**
 * Where a VirtualService destination goes: its service, the cluster `outbound|port|subset|host`
 * (whether or not the host is known: an unknown one has no cluster, so the proxy answers 503, as
 * the reference does), and the consistent hash that cluster applies, which its route must carry.
 */
import type { HTTPRoute } from "../../../config-model/schemas/virtual-service.js"
import type { Service } from "../../../registry/model.js"
import { destinationServiceOf, type PushContext, resolveHost } from "../../model/push-context.js"
import { outboundClusterName } from "../well-known.js"
import { anyConsistentHash, clusterHash, type DestinationHash, hashKeyOf, NO_HASH } from "./hash-policy.js"
import type { RouteTarget } from "./http-match.js"
import type { VirtualServiceResource } from "./virtual-services.js"

export interface DestinationSpec {
  readonly host: string
  readonly subset?: string | undefined
  readonly port?: { readonly number: number } | undefined
}

/** The service a destination host names (short names in the VirtualService's namespace, exact otherwise). */
export const destinationService = (push: PushContext, host: string, namespace: string): Service | undefined =>
  destinationServiceOf(push, host, namespace)

interface ResolvedDestination {
  readonly service: Service | undefined
  readonly host: string
  readonly port: number
  readonly subset: string
}

/** A destination's service, host and port: its port, else the service's only port, else the listener's. */
const resolveDestination = (
  push: PushContext,
  destination: DestinationSpec,
  namespace: string,
  listenerPort: number,
): ResolvedDestination => {
  const service = destinationService(push, destination.host, namespace)
  const host = service?.hostname ?? resolveHost(destination.host, namespace, push.options.domainSuffix)
  const port =
    destination.port?.number ??
    (service !== undefined && service.ports.length === 1 ? service.ports[0]!.port : listenerPort)
  return { service, host, port, subset: destination.subset ?? "" }
}

/** The cluster of a destination. `onUnknown` is called when the host is not in the registry. */
export const destinationCluster = (
  push: PushContext,
  destination: DestinationSpec,
  namespace: string,
  listenerPort: number,
  onUnknown?: (host: string) => void,
): string => {
  const resolved = resolveDestination(push, destination, namespace, listenerPort)
  if (resolved.service === undefined) onUnknown?.(resolved.host)
  return outboundClusterName(resolved.host, resolved.port, resolved.subset)
}

type RouteDestination = NonNullable<HTTPRoute["route"]>[number]

export interface DestinationHashes {
  /** By destination object of the VirtualService's http routes; absent: no hash. */
  readonly byDestination: ReadonlyMap<RouteDestination, DestinationHash>
  /** Every destination's hash as text, in route order: what the routes read of the rules. */
  readonly key: string
}

const NONE: DestinationHashes = { byDestination: new Map(), key: "" }

/**
 * The hash of each http route destination of `vs` for the proxy `target` stands for (the rules
 * it applies are those of its namespace and labels). Unknown hosts have no cluster, so no hash.
 */
export const destinationHashes = (
  push: PushContext,
  vs: VirtualServiceResource,
  target: RouteTarget,
): DestinationHashes => {
  if (!anyConsistentHash(push)) return NONE
  const workload = { namespace: target.sourceNamespace, labels: target.sourceLabels }
  const byDestination = new Map<RouteDestination, DestinationHash>()
  const keys: Array<string> = []
  for (const http of vs.spec.http ?? [])
    for (const d of http.route ?? []) {
      const resolved = resolveDestination(push, d.destination, vs.meta.namespace, target.port)
      const hash =
        resolved.service === undefined
          ? NO_HASH
          : clusterHash(push, workload, resolved.service, resolved.port, resolved.subset)
      if (hash.consistent) byDestination.set(d, hash)
      keys.push(hashKeyOf(hash))
    }
  return byDestination.size === 0 ? NONE : { byDestination, key: keys.join(";") }
}
