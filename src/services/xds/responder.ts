/**
 * Builds ADS responses for one watch from a PushContext, through the shared resource cache:
 * state-of-the-world (every subscribed resource that exists) and delta (only what changed,
 * plus explicit removals).
 */
import type { EncodedResource, ResourceCache } from "./cache.js"
import { type DeltaWatch, planDelta } from "./delta.js"
import { generate, type Subscription, setDigest } from "./grpc-gen.js"
import { type ProxyWorkload, proxyWorkload } from "./grpc-inbound.js"
import type { DeltaDiscoveryResponse, DiscoveryResponse, Node } from "./messages.js"
import { structToPlain } from "./messages.js"
import type { PushContext } from "./push-context.js"
import type { SotwWatch } from "./sotw.js"

export const resourcesFor = (
  push: PushContext,
  cache: ResourceCache,
  typeUrl: string,
  sub: Subscription,
): ReadonlyArray<EncodedResource> => cache.resolve(typeUrl, generate(push, typeUrl, sub))

export interface SotwResponse {
  readonly response: DiscoveryResponse
  readonly digest: string
  readonly bytes: number
}

export const sotwResponse = (
  push: PushContext,
  cache: ResourceCache,
  watch: SotwWatch,
  nonce: string,
  proxy?: ProxyInfo,
): SotwResponse => {
  const resources = resourcesFor(push, cache, watch.typeUrl, {
    wildcard: watch.wildcard,
    names: watch.names,
    ...workloadOf(proxy),
  })
  let bytes = 0
  for (const r of resources) bytes += r.resource.value.length
  return {
    response: {
      version_info: push.version,
      type_url: watch.typeUrl,
      nonce,
      resources: resources.map((r) => r.resource),
    },
    digest: setDigest(resources),
    bytes,
  }
}

export interface DeltaResponse {
  /** Undefined when nothing changed for this watch. */
  readonly response: DeltaDiscoveryResponse | undefined
  readonly sent: ReadonlyArray<{ readonly name: string; readonly version: string }>
  readonly removed: ReadonlyArray<string>
  readonly bytes: number
}

export const deltaResponse = (
  push: PushContext,
  cache: ResourceCache,
  watch: DeltaWatch,
  nonce: string,
  force: boolean,
  proxy?: ProxyInfo,
): DeltaResponse => {
  const resources = resourcesFor(push, cache, watch.typeUrl, {
    wildcard: watch.wildcard,
    names: [...watch.subscribed],
    ...workloadOf(proxy),
  })
  const plan = planDelta(watch, resources)
  const toSend = new Set(plan.send)
  const sent = resources.filter((r) => toSend.has(r.name))
  if (sent.length === 0 && plan.removed.length === 0 && !force) {
    return { response: undefined, sent: [], removed: [], bytes: 0 }
  }
  let bytes = 0
  for (const r of sent) bytes += r.resource.value.length
  return {
    response: {
      system_version_info: push.version,
      type_url: watch.typeUrl,
      nonce,
      resources: sent.map((r) => ({ name: r.name, version: r.version, resource: r.resource })),
      removed_resources: plan.removed,
    },
    sent: sent.map((r) => ({ name: r.name, version: r.version })),
    removed: plan.removed,
    bytes,
  }
}

export interface ProxyInfo {
  readonly id: string
  /** `grpc` for proxyless gRPC clients. */
  readonly generator: string
  readonly metadata: Readonly<Record<string, unknown>>
  /** Namespace and labels of the workload, for inbound (server) listeners. */
  readonly workload?: ProxyWorkload
}

const workloadOf = (proxy: ProxyInfo | undefined): { workload?: ProxyWorkload } =>
  proxy === undefined ? {} : { workload: proxy.workload ?? proxyWorkload(proxy.id, proxy.metadata) }

export const proxyInfo = (node: Node | null | undefined): ProxyInfo => {
  const metadata = structToPlain(node?.metadata)
  const generator = typeof metadata.GENERATOR === "string" ? metadata.GENERATOR : ""
  const id = node?.id ?? ""
  return { id, generator, metadata, workload: proxyWorkload(id, metadata) }
}
