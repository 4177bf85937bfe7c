/**
 * The shape every proxy (sidecar and gateway) generator shares: it reads a PushContext and the
 * view of the proxy asking, and returns resource specs (name, dependency key, builder) and what
 * it noticed in the config. The dispatcher (generate.ts) picks the generator per proxy kind and
 * type URL; the responder resolves the specs through the encode-once cache.
 *
 * A spec's key must name every input its bytes depend on (fingerprints, the scope key, the
 * proxy's service instances, options) and nothing proxy-specific it does not depend on (the
 * proxy's name or addresses, unless the bytes contain them): replicas of a workload, and
 * proxies seeing the same services, then share one encoding.
 */
import type { ResourceSpec } from "../cache/resource-spec.js"
import type { Generated } from "../grpcgen/generator-notices.js"
import type { PushContext } from "../model/push-context.js"
import type { ProxyView } from "./proxy-view.js"

export interface ProxySubscription {
  readonly wildcard: boolean
  /** The names asked for (empty for a wildcard watch). */
  readonly names: ReadonlyArray<string>
  readonly proxy: ProxyView
}

export type ProxyGenerator = (push: PushContext, sub: ProxySubscription) => Generated

export type { Generated, ResourceSpec }
