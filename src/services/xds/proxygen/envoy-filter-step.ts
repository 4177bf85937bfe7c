/**
 * EnvoyFilter patches over a proxy's generated resources (envoy-filter/). Most proxies have
 * none applying: their specs pass through untouched and lazy. When some apply, the resources of
 * the type are built, patched as a whole (ADD and REMOVE change the set), and keyed by the
 * digest of what came out (a patch may match on the proxy's version and metadata, so nothing
 * short of the result says which proxies may share it). Typed configs of types the server's
 * codec does not load are encoded on the way out (envoy-filter/foreign-types.ts).
 */
import { asProtoData, type ResourceSpec } from "../cache/resource-spec.js"
import type { Generated } from "../grpcgen/generator-notices.js"
import { digest, type PushContext } from "../model/push-context.js"
import { encodeForeignTypedConfigs } from "./envoy-filter/foreign-types.js"
import { applyEnvoyFilters, envoyFilterMemo, envoyFiltersForProxy, envoyFiltersKey } from "./envoy-filter/index.js"
import type { ProxyView } from "./proxy-view.js"

export const applyEnvoyFilterPatches = (
  push: PushContext,
  proxy: ProxyView,
  typeUrl: string,
  generated: Generated,
): Generated => {
  const filters = envoyFiltersForProxy(push, proxy)
  if (filters.length === 0) return generated
  const memo = push.memo.local(envoyFilterMemo)
  const filtersKey = envoyFiltersKey(filters, undefined, memo)
  const patched = applyEnvoyFilters(
    filters,
    proxy,
    typeUrl,
    generated.resources.map((r) => asProtoData(r.build())),
    { memo },
  )
  const resources = patched.resources.map((patchedResource): ResourceSpec => {
    const resource = encodeForeignTypedConfigs(patchedResource) as typeof patchedResource
    const name =
      typeof resource.name === "string"
        ? resource.name
        : typeof resource.cluster_name === "string"
          ? resource.cluster_name
          : ""
    return { name, key: `${digest(JSON.stringify(resource))}|ef:${filtersKey}`, build: () => resource }
  })
  return { resources, warnings: [...generated.warnings, ...patched.warnings] }
}
