/**
 * A WasmPlugin as the proxy's Wasm HTTP filter config (`envoy.extensions.filters.http.wasm.v3.Wasm`),
 * as the reference writes it: `file://` modules as local files, everything else (`oci://`,
 * `http(s)://`, bare image references, which mean `oci://`) as a remote source whose URI the
 * agent fetches and rewrites to a local file before the proxy sees it
 * (`MESH_AGENT_ENABLE_WASM_REMOTE_LOAD_CONVERSION`, the agent's side). The pull policy and the
 * resource version travel to the agent as VM environment variables it reads and strips.
 */
import { typed } from "../../protocol/typed-any.js"
import type { AsyncDataSource, EnvironmentVariables, ProtoAny } from "../../protocol/xds-types.js"
import { Filter, TypedConfig } from "../well-known.js"
import type { WasmPluginResource } from "./wasm-plugins.js"

export const WASM_RUNTIME_V8 = "envoy.wasm.runtime.v8"
/** VM environment variables the agent reads (the reference's `ISTIO_META_WASM_*`, renamed). */
export const WASM_IMAGE_PULL_POLICY_ENV = "MESH_META_WASM_IMAGE_PULL_POLICY"
export const WASM_RESOURCE_VERSION_ENV = "MESH_META_WASM_PLUGIN_RESOURCE_VERSION"
/** The reference's remote-fetch timeout and placeholder cluster (the agent fetches, not the proxy). */
export const REMOTE_FETCH_TIMEOUT_SECONDS = 30
export const REMOTE_PLACEHOLDER_CLUSTER = "_"

const STRING_VALUE_TYPE = "type.googleapis.com/google.protobuf.StringValue"
const SUPPORTED_SCHEMES = new Set(["file", "http", "https", "oci"])

/** The ECDS resource name (and HTTP filter name) of a plugin: `extensions.mesh.io/wasmplugin/<ns>.<name>`. */
export const wasmResourceName = (plugin: Pick<WasmPluginResource, "meta">): string =>
  `${Filter.wasmPrefix}${plugin.meta.namespace}.${plugin.meta.name}`

export type WasmSource =
  | { readonly kind: "local"; readonly filename: string }
  | { readonly kind: "remote"; readonly uri: string }
  | { readonly kind: "unsupported"; readonly problem: string }

/** Where the module comes from; a URL without a scheme is an OCI image reference. */
export const wasmSource = (url: string): WasmSource => {
  const full = url.includes("://") ? url : `oci://${url}`
  const scheme = full.slice(0, full.indexOf("://")).toLowerCase()
  if (!SUPPORTED_SCHEMES.has(scheme))
    return { kind: "unsupported", problem: `unsupported scheme ${JSON.stringify(scheme)} (file, http, https, oci)` }
  if (scheme === "file") {
    const filename = full.slice("file://".length)
    return filename === ""
      ? { kind: "unsupported", problem: "file:// URL without a path" }
      : { kind: "local", filename }
  }
  if (full.length === `${scheme}://`.length) return { kind: "unsupported", problem: "URL without a location" }
  return { kind: "remote", uri: full }
}

const code = (source: Exclude<WasmSource, { kind: "unsupported" }>, sha256: string | undefined): AsyncDataSource =>
  source.kind === "local"
    ? { local: { filename: source.filename } }
    : {
        remote: {
          http_uri: {
            uri: source.uri,
            cluster: REMOTE_PLACEHOLDER_CLUSTER,
            timeout: { seconds: String(REMOTE_FETCH_TIMEOUT_SECONDS) },
          },
          ...(sha256 !== undefined && sha256 !== "" ? { sha256 } : {}),
        },
      }

const environment = (plugin: WasmPluginResource): EnvironmentVariables => {
  const keyValues: Record<string, string> = {
    [WASM_IMAGE_PULL_POLICY_ENV]: plugin.spec.imagePullPolicy ?? "UNSPECIFIED_POLICY",
  }
  if (plugin.meta.resourceVersion !== undefined && plugin.meta.resourceVersion !== "")
    keyValues[WASM_RESOURCE_VERSION_ENV] = plugin.meta.resourceVersion
  const hostEnvKeys: Array<string> = []
  for (const env of plugin.spec.vmConfig?.env ?? []) {
    if (env.valueFrom === "HOST") hostEnvKeys.push(env.name)
    else keyValues[env.name] = env.value ?? ""
  }
  return { ...(hostEnvKeys.length > 0 ? { host_env_keys: hostEnvKeys } : {}), key_values: keyValues }
}

/**
 * The Wasm filter typed config of a plugin; a problem instead when its URL cannot be served (the
 * plugin is then left out everywhere: a filter referencing a config that never arrives would
 * keep its listener from ever warming).
 */
export const wasmFilterConfig = (
  plugin: WasmPluginResource,
): { readonly config: ProtoAny } | { readonly problem: string } => {
  const source = wasmSource(plugin.spec.url)
  if (source.kind === "unsupported") return { problem: source.problem }
  const pluginConfig = plugin.spec.pluginConfig
  return {
    config: typed(TypedConfig.wasmHttp, {
      config: {
        name: `${plugin.meta.namespace}.${plugin.meta.name}`,
        ...(plugin.spec.pluginName !== undefined && plugin.spec.pluginName !== ""
          ? { root_id: plugin.spec.pluginName }
          : {}),
        vm_config: {
          runtime: WASM_RUNTIME_V8,
          code: code(source, plugin.spec.sha256),
          environment_variables: environment(plugin),
        },
        ...(pluginConfig !== undefined && Object.keys(pluginConfig).length > 0
          ? { configuration: typed(STRING_VALUE_TYPE, { value: JSON.stringify(pluginConfig) }) }
          : {}),
        ...(plugin.spec.failStrategy === "FAIL_OPEN" ? { fail_open: true } : {}),
      },
    }),
  }
}
