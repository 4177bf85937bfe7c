/**
 * The WasmFetcher of `mesh-agent proxy`: its WASM_* variables from AgentConfig, its cache under
 * the agent's working directory unless another directory is given.
 */
import { Effect, Layer } from "effect"
import { AgentConfig } from "../../../services/config/agent-config.js"
import { DEFAULT_WASM_CACHE_DIR, layer as fetcherLayer } from "./fetcher.js"

export const layer = (cacheDir: string = DEFAULT_WASM_CACHE_DIR) =>
  Layer.unwrapEffect(
    Effect.map(AgentConfig, (config) =>
      fetcherLayer({
        cacheDir,
        moduleExpiry: config.WASM_MODULE_EXPIRY,
        purgeInterval: config.WASM_PURGE_INTERVAL,
        requestTimeout: config.WASM_HTTP_REQUEST_TIMEOUT,
        maxAttempts: config.WASM_HTTP_REQUEST_MAX_RETRIES,
        insecureRegistries: config.WASM_INSECURE_REGISTRIES,
        maxModuleBytes: config.MESH_WASM_MAX_BINARY_SIZE_BYTES,
        fetchTimeout: config.WASM_FETCH_TIMEOUT,
        refuseMetadataAddresses: config.WASM_REFUSE_METADATA_ADDRESSES,
      }),
    ),
  )
