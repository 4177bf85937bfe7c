/**
 * Which EnvoyFilters apply to a proxy, in the order their patches apply, and the digest the
 * generators fold into the keys of resources they patch.
 *
 * As the reference: the EnvoyFilters of the root namespace, then those of the proxy's namespace,
 * each group sorted by priority, then creation time, then `name.namespace`; the whole then
 * stably sorted by priority, so at equal priority the root namespace's come first. A filter
 * applies when its `workloadSelector` labels are a subset of the proxy's labels (no selector:
 * every proxy of the namespace), or when one of its `targetRefs` names the proxy's Gateway
 * (gateway-API deployments carry the `gateway.networking.k8s.io/gateway-name` label).
 */
import { createHash } from "node:crypto"
import type { ConfigResource } from "../../../config-model/resource.js"
import type { EnvoyFilterSpec } from "../../../config-model/schemas/envoy-filter.js"
import type { LocalSlot } from "../../model/local-slot.js"
import type { PushContext } from "../../model/push-context.js"
import type { ProxyView } from "../proxy-view.js"
import { matchesLabels } from "../scope.js"
import { compileEnvoyFilter, type EnvoyFilterMemo } from "./patches.js"

type EnvoyFilter = ConfigResource<EnvoyFilterSpec>

const GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name"
const GATEWAY_GROUP = "gateway.networking.k8s.io"

const targets = (filter: EnvoyFilter, proxy: ProxyView): boolean =>
  (filter.spec.targetRefs ?? []).some(
    (ref) =>
      ref.kind === "Gateway" &&
      (ref.group === undefined || ref.group === "" || ref.group === GATEWAY_GROUP) &&
      (ref.namespace === undefined || ref.namespace === "" || ref.namespace === filter.meta.namespace) &&
      filter.meta.namespace === proxy.namespace &&
      proxy.labels[GATEWAY_NAME_LABEL] === ref.name,
  )

const applies = (filter: EnvoyFilter, proxy: ProxyView): boolean =>
  (filter.spec.targetRefs?.length ?? 0) > 0
    ? targets(filter, proxy)
    : matchesLabels(filter.spec.workloadSelector?.labels, proxy.labels)

const byAge = (a: EnvoyFilter, b: EnvoyFilter): number => {
  const pa = a.spec.priority ?? 0
  const pb = b.spec.priority ?? 0
  if (pa !== pb) return pa - pb
  const ta = a.meta.creationTimestamp ?? ""
  const tb = b.meta.creationTimestamp ?? ""
  const ma = Date.parse(ta)
  const mb = Date.parse(tb)
  if (!Number.isNaN(ma) && !Number.isNaN(mb) && ma !== mb) return ma - mb
  if (ta !== tb && (Number.isNaN(ma) || Number.isNaN(mb))) return ta < tb ? -1 : 1
  const na = `${a.meta.name}.${a.meta.namespace}`
  const nb = `${b.meta.name}.${b.meta.namespace}`
  return na < nb ? -1 : na > nb ? 1 : 0
}

const selections: LocalSlot<Map<string, ReadonlyArray<EnvoyFilter>>, PushContext> = { make: () => new Map() }

/** The EnvoyFilters that apply to `proxy`, in patch order (memoised per push, namespace and labels). */
export const envoyFiltersForProxy = (push: PushContext, proxy: ProxyView): ReadonlyArray<EnvoyFilter> => {
  const all = push.proxyConfig.envoyFilters
  if (all.length === 0) return []
  const byKey = push.local(selections)
  const labels = Object.entries(proxy.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  const key = JSON.stringify([proxy.namespace, labels])
  const cached = byKey.get(key)
  if (cached !== undefined) return cached
  const root = push.options.rootNamespace
  const inNamespace = (ns: string) => all.filter((f) => f.meta.namespace === ns && applies(f, proxy)).sort(byAge)
  const rootFilters = root === "" ? [] : inNamespace(root)
  const own = proxy.namespace === root ? [] : inNamespace(proxy.namespace)
  // Array.prototype.sort is stable: at equal priority the root namespace's stay first.
  const selected = [...rootFilters, ...own].sort((a, b) => (a.spec.priority ?? 0) - (b.spec.priority ?? 0))
  byKey.set(key, selected)
  return selected
}

const digestOf = (filter: EnvoyFilter, memo: EnvoyFilterMemo | undefined): string => {
  const cached = memo?.digests.get(filter)
  if (cached !== undefined) return cached
  const d = createHash("sha1")
    .update(JSON.stringify([filter.meta.namespace, filter.meta.name, filter.spec]))
    .digest("base64url")
    .slice(0, 16)
  memo?.digests.set(filter, d)
  return d
}

/**
 * The digest of the EnvoyFilters applied to a proxy, to fold into the keys of the resources they
 * may patch: empty when there are none (keys of unpatched proxies stay as they are). Patches can
 * also match the proxy's version and metadata, which a ProxyView's `scopeKey` does not cover:
 * pass the proxy and, when a patch looks at them, the values it reads are part of the digest.
 * `memo` (the push's `envoyFilterMemo`) remembers each filter's digest and patches.
 */
export const envoyFiltersKey = (
  filters: ReadonlyArray<EnvoyFilter>,
  proxy?: ProxyView,
  memo?: EnvoyFilterMemo,
): string => {
  if (filters.length === 0) return ""
  const parts: Array<string> = filters.map((filter) => digestOf(filter, memo))
  if (proxy !== undefined) {
    const read = new Set<string>()
    let version = false
    for (const filter of filters)
      for (const patch of compileEnvoyFilter(filter, memo).patches) {
        if (patch.proxyVersion !== undefined) version = true
        for (const k of Object.keys(patch.match.proxy?.metadata ?? {})) read.add(k)
      }
    if (version) parts.push(`v=${proxy.version}`)
    for (const k of [...read].sort()) parts.push(`m:${k}=${JSON.stringify(proxy.metadata[k] ?? null)}`)
  }
  return `ef:${createHash("sha1").update(parts.join("\n")).digest("base64url").slice(0, 16)}`
}
