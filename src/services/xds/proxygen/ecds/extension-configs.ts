/**
 * ECDS: the `TypedExtensionConfig` resources a proxy's Wasm filter entries name, one per
 * WasmPlugin applying to it, each keyed by the plugin's own content (a plugin's config depends
 * on nothing else), so every proxy it applies to shares one encoding.
 */
import type { ResourceSpec } from "../../cache/resource-spec.js"
import type { Generated, GeneratorNotice } from "../../grpcgen/generator-notices.js"
import { type LocalSlot, memoOf } from "../../model/local-slot.js"
import { digest, type PushContext } from "../../model/push-context.js"
import type { Config_Core_TypedExtensionConfig as TypedExtensionConfig } from "../../protocol/xds-types.js"
import type { ProxySubscription } from "../contract.js"
import type { ProxyView } from "../proxy-view.js"
import { wasmFilterConfig, wasmResourceName } from "./wasm-config.js"
import { networkPluginsForProxy, type WasmPluginResource, wasmPluginsForProxy } from "./wasm-plugins.js"

/** By resource (shared by a lineage of contexts, like the views). */
const digests: LocalSlot<WeakMap<WasmPluginResource, string>> = { make: () => new WeakMap() }

const pluginDigest = (push: PushContext, plugin: WasmPluginResource): string =>
  memoOf(push.memo.local(digests), plugin, () =>
    digest(JSON.stringify([plugin.meta.namespace, plugin.meta.name, plugin.meta.resourceVersion ?? "", plugin.spec])),
  )

const label = (plugin: WasmPluginResource): string => `WasmPlugin ${plugin.meta.namespace}/${plugin.meta.name}`

const notice = (message: string): GeneratorNotice => ({ level: "warning", scope: "wasm", message })

/**
 * The extension configs of the WasmPlugins applying to `proxy` named in `names` (all of them for
 * an empty list). Names of no applying plugin have no resource.
 */
export const generateExtensionConfigs = (
  push: PushContext,
  proxy: ProxyView,
  names: ReadonlyArray<string>,
): Generated<TypedExtensionConfig> => {
  const wanted = names.length === 0 ? undefined : new Set(names)
  const resources: Array<ResourceSpec<TypedExtensionConfig>> = []
  const warnings: Array<GeneratorNotice> = []
  for (const plugin of wasmPluginsForProxy(push, proxy)) {
    const name = wasmResourceName(plugin)
    if (wanted !== undefined && !wanted.has(name)) continue
    const built = wasmFilterConfig(plugin)
    if ("problem" in built) {
      const failClosed = plugin.spec.failStrategy !== "FAIL_OPEN"
      warnings.push(
        notice(
          `${label(plugin)} field url: ${built.problem}: plugin skipped${failClosed ? " (its failStrategy is fail-closed, yet traffic is not denied: the filter is left out)" : ""}`,
        ),
      )
      continue
    }
    if ((plugin.spec.imagePullSecret ?? "") !== "")
      warnings.push(
        notice(`${label(plugin)} field imagePullSecret: not supported: the module is pulled without credentials`),
      )
    if (plugin.spec.failStrategy === "FAIL_RELOAD")
      warnings.push(
        notice(
          `${label(plugin)} field failStrategy: FAIL_RELOAD is not expressible in the proxy's Wasm API here: the plugin fails closed`,
        ),
      )
    const typedConfig = built.config
    resources.push({
      name,
      key: `ecds|${pluginDigest(push, plugin)}`,
      build: () => ({ name, typed_config: typedConfig }),
    })
  }
  for (const plugin of networkPluginsForProxy(push, proxy))
    warnings.push(notice(`${label(plugin)} field type: NETWORK plugins are not supported: plugin skipped`))
  return { resources, warnings }
}

/** `generateExtensionConfigs` as a ProxyGenerator. */
export const extensionConfigGenerator = (push: PushContext, sub: ProxySubscription): Generated<TypedExtensionConfig> =>
  generateExtensionConfigs(push, sub.proxy, sub.names)
