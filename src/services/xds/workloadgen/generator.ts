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
 * The index is built once per PushContext (in its slot) for the whole server, from what the
 * previous contexts of its lineage built (ambient-index.ts), so node proxies share everything:
 * nothing here depends on the proxy asking. The cache key of a message is the message object's
 * number in that cache: the index hands over the same object while the content is the same, so
 * a push never hashes (or encodes) the messages that did not change.
 */
import type { CacheLocal, ResourceCache } from "../cache/resource-cache.js"
import type { ResourceSpec } from "../cache/resource-spec.js"
import { type Generated, type GeneratorNotice, noNotices } from "../grpcgen/generator-notices.js"
import type { LocalSlot } from "../model/local-slot.js"
import type { PushContext } from "../model/push-context.js"
import { TypeUrl } from "../protocol/type-urls.js"
import type { Authorization, Workload_Address } from "../protocol/xds-types.js"
import { type AddressEntry, type AmbientIndex, buildAmbientIndex } from "./ambient-index.js"
import { type AmbientIndexMemo, makeAmbientIndexMemo } from "./index-memo.js"

export const isWorkloadApiType = (typeUrl: string): boolean =>
  typeUrl === TypeUrl.Address || typeUrl === TypeUrl.Authorization

/** What the lineage's builds leave for the next (shared by the contexts built from one another). */
const memos: LocalSlot<AmbientIndexMemo> = { make: makeAmbientIndexMemo }

/** The context's index; null when ambient is off (no ambient input). */
const indexes: LocalSlot<AmbientIndex | null, PushContext> = {
  make: (push) => {
    const ambient = push.input.ambient
    return ambient === undefined
      ? null
      : buildAmbientIndex(
          {
            ambient,
            services: push.input.services,
            endpointsByHost: push.endpointsByHost,
            authorizationPolicies: push.input.authorizationPolicies ?? [],
            trustDomain: push.options.trustDomain,
            domainSuffix: push.options.domainSuffix,
            rootNamespace: push.options.rootNamespace,
          },
          push.memo.local(memos),
        )
  },
}

/** The push's ambient index; undefined when ambient is off. */
export const ambientIndexOf = (push: PushContext): AmbientIndex | undefined => push.local(indexes) ?? undefined

/** A number per message object in one cache: an equal message is the same object (see above). */
const messageKeys: CacheLocal<{ readonly ids: WeakMap<WorkloadMessage, string>; next: number }> = {
  make: () => ({ ids: new WeakMap(), next: 0 }),
}

/** The node proxy's resources: addresses and authorizations. */
type WorkloadMessage = Workload_Address | Authorization

const keyOf = (cache: ResourceCache, message: WorkloadMessage): string => {
  const keys = cache.local(messageKeys)
  let key = keys.ids.get(message)
  if (key === undefined) {
    key = `wds|${keys.next++}`
    keys.ids.set(message, key)
  }
  return key
}

const spec = (cache: ResourceCache, name: string, message: WorkloadMessage): ResourceSpec<WorkloadMessage> => ({
  name,
  key: keyOf(cache, message),
  build: () => message,
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
): Generated<WorkloadMessage> => {
  const index = ambientIndexOf(push)
  if (index === undefined) return { resources: [], warnings: noNotices }
  const warnings: ReadonlyArray<GeneratorNotice> =
    index.notices.length === 0
      ? noNotices
      : index.notices.map((message) => ({ level: "warning", scope: "ambient", message }))
  if (typeUrl === TypeUrl.Authorization) {
    const wanted = sub.wildcard ? undefined : new Set(sub.names)
    const resources = index.authorizations
      .filter((a) => wanted === undefined || wanted.has(a.name))
      .map((a) => spec(cache, a.name, a.message))
    return { resources, warnings }
  }
  if (sub.wildcard) return { resources: index.addresses.map((e) => spec(cache, e.name, e.message)), warnings }
  const resources: Array<ResourceSpec<WorkloadMessage>> = []
  for (const name of sub.names) {
    const entry = index.byName.get(name) ?? addressOf(index, name)
    if (entry !== undefined) resources.push(spec(cache, name, entry.message))
  }
  return { resources, warnings }
}
