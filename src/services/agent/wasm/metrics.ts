/**
 * The Wasm metrics of spec 001 §6, by the reference's names and label values. The fetcher records
 * the cache and remote-fetch ones; `wasmConversionMetrics` is for the xDS-proxy side, which
 * converts ECDS remote sources into local files with the fetcher.
 */
import type { MetricsShape } from "../../metrics/metrics.js"

/** `result` of `wasm_remote_fetch_count`. */
export const WasmFetchResult = {
  success: "success",
  downloadFailure: "download_failure",
  manifestFailure: "manifest_failure",
  checksumMismatch: "checksum_mismatched",
  fetchFailure: "fetch_failure",
} as const
export type WasmFetchResult = (typeof WasmFetchResult)[keyof typeof WasmFetchResult]

/** `result` of `wasm_config_conversion_count`. */
export const WasmConversionResult = {
  success: "success",
  noRemoteLoad: "no_remote_load",
  marshalFailure: "marshal_failure",
  unmarshalFailure: "unmarshal_failure",
  fetchFailure: "fetch_failure",
  missingFetchHint: "miss_remote_fetch_hint",
} as const
export type WasmConversionResult = (typeof WasmConversionResult)[keyof typeof WasmConversionResult]

export const wasmFetchMetrics = (metrics: MetricsShape) => ({
  cacheEntries: metrics.gauge("wasm_cache_entries", "number of Wasm remote fetch cache entries."),
  cacheLookups: metrics.counter("wasm_cache_lookup_count", "number of Wasm remote fetch cache lookups.", ["hit"]),
  remoteFetches: metrics.counter("wasm_remote_fetch_count", "number of Wasm remote fetches and results.", ["result"]),
})

const CONVERSION_BUCKETS_MS = [0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000]

export const wasmConversionMetrics = (metrics: MetricsShape) => {
  const conversions = metrics.counter(
    "wasm_config_conversion_count",
    "number of Wasm config conversion count and results, including success, no remote load, marshal failure, remote fetch failure, miss remote fetch hint.",
    ["result"],
  )
  const duration = metrics.histogram(
    "wasm_config_conversion_duration",
    "Total time in milliseconds mesh-agent spends on converting remote load in Wasm config.",
    [],
    CONVERSION_BUCKETS_MS,
  )
  return {
    conversions,
    duration,
    /** One conversion: its result and how long it took. */
    record: (result: WasmConversionResult, millis: number) => {
      conversions.inc({ result })
      duration.observe(millis)
    },
  }
}
