/** EnvoyFilter patching: which filters apply to a proxy, applying them, and their digest. */
export {
  applyEnvoyFilters,
  CLUSTER_TYPE,
  type EnvoyFilterPatchOptions,
  EXTENSION_CONFIG_TYPE,
  LISTENER_TYPE,
  type Patched,
  ROUTE_CONFIGURATION_TYPE,
} from "./apply.js"
export { type EnvoyFilterMemo, envoyFilterMemo } from "./patches.js"
export { envoyFiltersForProxy, envoyFiltersKey } from "./select.js"
