/**
 * The node proxy's workload API generator (the reference's WorkloadGenerator and
 * WorkloadRBACGenerator), for both type URLs over delta ADS:
 * - `Address`: wildcard gets every workload and service; on demand, each subscribed name is a
 *   resource name (a workload uid, a service's `namespace/hostname`) or an address
 *   `network/ip`, answered with the workload or service at that address under the name asked
 *   for (the delta state then follows it like any other name: a change is sent, a removal
 *   reported);
 * - `Authorization`: every L4 authorization, or those named.
 * Removals come from the delta state machine (names the client holds that no longer exist).
 * The index is built once per PushContext for the whole server (kept in the resource cache's
 * slot, weakly per context) and each message's bytes once per content (the cache key is its
 * digest), so node proxies share everything: nothing here depends on the proxy asking.
 */
import type { CacheLocal, ResourceCache } from "../xds/cache/resource-cache.js"
import type { ProtoObject, ResourceSpec } from "../xds/cache/resource-spec.js"
import { type Generated, type GeneratorNotice, noNotices } from "../xds/grpcgen/generator-notices.js"
import type { PushContext } from "../xds/model/push-context.js"
import { TypeUrl } from "../xds/protocol/type-urls.js"
import { type AddressEntry, type AmbientIndex, buildAmbientIndex } from "./ambient-index.js"

export const isWorkloadApiType = (typeUrl: string): boolean =>
  typeUrl === TypeUrl.Address || typeUrl === TypeUrl.Authorization

const indexes: CacheLocal<WeakMap<PushContext, AmbientIndex | null>> = { make: () => new WeakMap() }

/** The push's ambient index; undefined when ambient is off (no ambient input). */
export const ambientIndexOf = (push: PushContext, cache: ResourceCache): AmbientIndex | undefined => {
  const memo = cache.local(indexes)
  let index = memo.get(push)
  if (index === undefined) {
    const ambient = push.input.ambient
    index =
      ambient === undefined
        ? null
        : buildAmbientIndex({
            ambient,
            services: push.input.services,
            endpoints: push.input.endpoints,
            authorizationPolicies: push.input.authorizationPolicies ?? [],
            trustDomain: push.options.trustDomain,
            domainSuffix: push.options.domainSuffix,
            rootNamespace: push.options.rootNamespace,
          })
    memo.set(push, index)
  }
  return index ?? undefined
}

const spec = (name: string, entry: { readonly key: string; readonly message: ProtoObject }): ResourceSpec => ({
  name,
  key: `wds|${entry.key}`,
  build: () => entry.message,
})

/** A name that is an address: `network/ip` (the network may be empty). */
const addressOf = (index: AmbientIndex, name: string): AddressEntry | undefined => {
  const found = index.byAddress.get(name)
  if (found === undefined || found.length === 0) return undefined
  // A pod's own address and a service VIP never coincide; prefer the workload when they do.
  return found.find((e) => "workload" in e.message) ?? found[0]
}

export const generateWorkloadApi = (
  push: PushContext,
  cache: ResourceCache,
  typeUrl: string,
  sub: { readonly wildcard: boolean; readonly names: ReadonlyArray<string> },
): Generated => {
  const index = ambientIndexOf(push, cache)
  if (index === undefined) return { resources: [], warnings: noNotices }
  const warnings: ReadonlyArray<GeneratorNotice> =
    index.notices.length === 0
      ? noNotices
      : index.notices.map((message) => ({ level: "warning", scope: "ambient", message }))
  if (typeUrl === TypeUrl.Authorization) {
    const wanted = sub.wildcard ? undefined : new Set(sub.names)
    const resources = index.authorizations
      .filter((a) => wanted === undefined || wanted.has(a.name))
      .map((a) => spec(a.name, a))
    return { resources, warnings }
  }
  if (sub.wildcard) return { resources: index.addresses.map((e) => spec(e.name, e)), warnings }
  const resources: Array<ResourceSpec> = []
  for (const name of sub.names) {
    const entry = index.byName.get(name) ?? addressOf(index, name)
    if (entry !== undefined) resources.push(spec(name, entry))
  }
  return { resources, warnings }
}
