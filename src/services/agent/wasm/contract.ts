/**
 * The agent's Wasm module fetcher (spec 001, `WASM_*` variables): turns a remote module reference
 * (`http://`, `https://`, `oci://`) into a file on local disk, through an on-disk cache. The xDS
 * proxy uses it to rewrite ECDS remote sources to local files
 * (`MESH_AGENT_ENABLE_WASM_REMOTE_LOAD_CONVERSION`).
 */
import { Context, Data, type Effect } from "effect"

/** The image pull policy of a WasmPlugin (its `imagePullPolicy`; "" = the default). */
export type WasmPullPolicy = "" | "IfNotPresent" | "Always"

export interface WasmModuleRequest {
  /** `http(s)://…` or `oci://registry/repo[:tag|@sha256:…]` (a bare `registry/repo` is OCI too). */
  readonly url: string
  /** Expected sha256 of the module (hex); when set, a mismatch is an error. */
  readonly sha256?: string
  readonly pullPolicy: WasmPullPolicy
  /** A `.dockerconfigjson` document with registry credentials (from the plugin's pull secret). */
  readonly pullSecret?: string
  /**
   * The resource version of the WasmPlugin: with policy IfNotPresent a cached module is reused;
   * with Always a new version pulls again (the same version reuses the cache).
   */
  readonly resourceVersion?: string
  /**
   * The WasmPlugin's fully-qualified name (e.g. the ECDS resource name): resource versions are
   * remembered per (url, resourceName), so two plugins pulling one URL with policy Always do not
   * make each other re-pull. Optional; "" when absent.
   */
  readonly resourceName?: string
}

export class WasmFetchError extends Data.TaggedError("WasmFetchError")<{
  readonly url: string
  readonly reason: string
}> {}

export interface WasmFetcherShape {
  /** The local path of the module's bytes (in the cache directory). */
  readonly fetch: (request: WasmModuleRequest) => Effect.Effect<string, WasmFetchError>
}

export class WasmFetcher extends Context.Tag("mesh/agent/WasmFetcher")<WasmFetcher, WasmFetcherShape>() {}
