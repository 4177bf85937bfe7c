/**
 * ECDS Wasm remote-load conversion (`MESH_AGENT_ENABLE_WASM_REMOTE_LOAD_CONVERSION`): the
 * discovery server writes a WasmPlugin whose module is remote as a Wasm HTTP filter config with
 * `vm_config.code.remote.http_uri` (wasm-config.ts); the proxy cannot fetch it (its cluster is a
 * placeholder), the agent does, and rewrites the code to the local file it got. The pull policy,
 * resource version (and, in the reference, pull secret) travel as `MESH_META_*` VM environment
 * variables for the agent only: they are stripped, so neither the proxy nor the module sees them.
 *
 * When the module cannot be fetched the plugin's filter is replaced by an RBAC filter under the
 * same name (the listeners accept RBAC for a Wasm plugin's name, wasm-filters.ts), as the
 * reference agent does:
 * - fail-open plugin: RBAC without `rules`, which enforces nothing (allow all);
 * - fail-closed plugin: RBAC whose rules DENY every request through one policy matching any
 *   permission and any principal. Envoy also denies everything for `rules` present and empty,
 *   but that relies on the presence of an empty message, which a re-encoding through JSON or a
 *   config dump that drops empty objects turns into "no rules" = allow all — the wrong way for a
 *   plugin that must fail closed. An explicit DENY-any policy has no such reading.
 *
 * The objects here are proto-loader's JSON form (`@type` inside `Any`), as the xDS codec decodes
 * and encodes them.
 */
import type { ProtoObject } from "../../xds/cache/resource-spec.js"
import { TypedConfig } from "../../xds/proxygen/well-known.js"
import type { WasmModuleRequest, WasmPullPolicy } from "../wasm/contract.js"

/** The VM environment variables the control plane writes for the agent (wasm-config.ts) and the reference's secret. */
export const WASM_PULL_POLICY_ENV = "MESH_META_WASM_IMAGE_PULL_POLICY"
export const WASM_RESOURCE_VERSION_ENV = "MESH_META_WASM_PLUGIN_RESOURCE_VERSION"
export const WASM_PULL_SECRET_ENV = "MESH_META_WASM_IMAGE_PULL_SECRET"
/** Agent-only variables: every `MESH_META_*` key is stripped from the VM environment (the reference strips its prefix). */
const AGENT_ONLY_ENV_PREFIX = "MESH_META_"

/** Results of `wasm_config_conversion_count` (the reference's label values). */
export type ConversionResult =
  | "success"
  | "no_remote_load"
  | "unmarshal_failure"
  | "marshal_failure"
  | "fetch_failure"
  | "miss_remote_fetch_hint"

export type ConversionPlan =
  /** Not a Wasm HTTP filter config: passed on unchanged, not counted. */
  | { readonly kind: "not-wasm" }
  /** Wasm with local code (or none): passed on unchanged. */
  | { readonly kind: "no-remote-load" }
  /** Remote code without an HTTP URI: nothing to fetch; treated as a failed fetch. */
  | { readonly kind: "missing-uri"; readonly failOpen: boolean }
  | { readonly kind: "fetch"; readonly request: WasmModuleRequest; readonly failOpen: boolean }

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined)

const pullPolicyOf = (value: string | undefined): WasmPullPolicy =>
  value === "IfNotPresent" || value === "Always" ? value : ""

/** The Wasm filter's `config` (PluginConfig) of a TypedExtensionConfig, when it is one. */
const pluginConfigOf = (extensionConfig: ProtoObject): Record<string, unknown> | undefined => {
  const typed = extensionConfig.typed_config
  if (!isObject(typed) || typed["@type"] !== TypedConfig.wasmHttp) return undefined
  return isObject(typed.config) ? typed.config : {}
}

const keyValuesOf = (plugin: Record<string, unknown>): Record<string, unknown> => {
  const vm = isObject(plugin.vm_config) ? plugin.vm_config : {}
  const env = isObject(vm.environment_variables) ? vm.environment_variables : {}
  return isObject(env.key_values) ? env.key_values : {}
}

/** What converting one extension config takes. */
export const planConversion = (extensionConfig: ProtoObject): ConversionPlan => {
  const plugin = pluginConfigOf(extensionConfig)
  if (plugin === undefined) return { kind: "not-wasm" }
  const vm = isObject(plugin.vm_config) ? plugin.vm_config : {}
  const code = isObject(vm.code) ? vm.code : {}
  if (!isObject(code.remote)) return { kind: "no-remote-load" }
  const failOpen = plugin.fail_open === true
  const remote = code.remote
  const uri = isObject(remote.http_uri) ? text(remote.http_uri.uri) : undefined
  if (uri === undefined) return { kind: "missing-uri", failOpen }
  const env = keyValuesOf(plugin)
  const sha256 = text(remote.sha256)
  const pullSecret = text(env[WASM_PULL_SECRET_ENV])
  const resourceVersion = text(env[WASM_RESOURCE_VERSION_ENV])
  return {
    kind: "fetch",
    failOpen,
    request: {
      url: uri,
      pullPolicy: pullPolicyOf(text(env[WASM_PULL_POLICY_ENV])),
      ...(sha256 !== undefined ? { sha256 } : {}),
      ...(pullSecret !== undefined ? { pullSecret } : {}),
      ...(resourceVersion !== undefined ? { resourceVersion } : {}),
    },
  }
}

/** The VM environment without the agent-only variables; undefined when nothing is left. */
const strippedEnvironment = (vm: Record<string, unknown>): Record<string, unknown> | undefined => {
  const env = isObject(vm.environment_variables) ? vm.environment_variables : {}
  const keyValues = Object.fromEntries(
    Object.entries(isObject(env.key_values) ? env.key_values : {}).filter(
      ([key]) => !key.startsWith(AGENT_ONLY_ENV_PREFIX),
    ),
  )
  const hostKeys = Array.isArray(env.host_env_keys) ? env.host_env_keys : []
  if (Object.keys(keyValues).length === 0 && hostKeys.length === 0) return undefined
  return {
    ...(hostKeys.length > 0 ? { host_env_keys: hostKeys } : {}),
    ...(Object.keys(keyValues).length > 0 ? { key_values: keyValues } : {}),
  }
}

/** The extension config with its module loaded from `filename` and the agent-only variables gone. */
export const withLocalModule = (extensionConfig: ProtoObject, filename: string): ProtoObject => {
  const typed = extensionConfig.typed_config as Record<string, unknown>
  const plugin = pluginConfigOf(extensionConfig) ?? {}
  const { vm_config: vmField, ...pluginRest } = plugin
  const vm = isObject(vmField) ? vmField : {}
  const { code: _remote, environment_variables: _env, ...vmRest } = vm
  const environment = strippedEnvironment(vm)
  return {
    ...extensionConfig,
    typed_config: {
      ...typed,
      config: {
        ...pluginRest,
        vm_config: {
          ...vmRest,
          code: { local: { filename } },
          ...(environment !== undefined ? { environment_variables: environment } : {}),
        },
      },
    },
  }
}

/** The policy name of the deny-all replacement (shows in the proxy's RBAC stats and logs). */
export const DENY_ALL_POLICY = "wasm-module-unavailable"

/** RBAC enforcing nothing: a fail-open plugin whose module could not be fetched is skipped. */
export const allowAllFilterConfig = (name: string): ProtoObject => ({
  name,
  typed_config: { "@type": TypedConfig.rbac },
})

/** RBAC denying every request: a fail-closed plugin whose module could not be fetched stops traffic. */
export const denyAllFilterConfig = (name: string): ProtoObject => ({
  name,
  typed_config: {
    "@type": TypedConfig.rbac,
    rules: {
      action: "DENY",
      policies: { [DENY_ALL_POLICY]: { permissions: [{ any: true }], principals: [{ any: true }] } },
    },
  },
})

/** The replacement of a plugin whose module could not be fetched. */
export const fetchFailureReplacement = (extensionConfig: ProtoObject, failOpen: boolean): ProtoObject => {
  const name = typeof extensionConfig.name === "string" ? extensionConfig.name : ""
  return failOpen ? allowAllFilterConfig(name) : denyAllFilterConfig(name)
}
