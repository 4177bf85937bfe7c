/** WasmPlugins: their selection and order, the ECDS filter references, and the ECDS resources. */
export { extensionConfigGenerator, generateExtensionConfigs } from "./extension-configs.js"
export {
  REMOTE_FETCH_TIMEOUT_SECONDS,
  REMOTE_PLACEHOLDER_CLUSTER,
  WASM_IMAGE_PULL_POLICY_ENV,
  WASM_RESOURCE_VERSION_ENV,
  WASM_RUNTIME_V8,
  type WasmSource,
  wasmFilterConfig,
  wasmResourceName,
  wasmSource,
} from "./wasm-config.js"
export {
  ecdsHttpFilter,
  placeWasmFilters,
  WASM_CONFIG_TYPE_URLS,
  type WasmFilterRef,
  wasmFilterRefs,
} from "./wasm-filters.js"
export {
  type ListenerDirection,
  matchesListener,
  PHASES,
  phaseOf,
  type WasmListener,
  type WasmPhase,
  type WasmPluginResource,
  wasmPluginsForProxy,
} from "./wasm-plugins.js"
