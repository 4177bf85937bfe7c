/**
 * EnvoyFilter patching of one xDS response's resources for one proxy: listeners (LDS), route
 * configurations (RDS), clusters (CDS) and extension configs (ECDS); other types pass unchanged.
 * Pure and deterministic, and it never throws: a patch that cannot apply is skipped with a
 * warning naming the EnvoyFilter and `configPatches[i]`. The result's resources are new objects
 * where a patch changed something and the caller's elsewhere; the caller's are never mutated.
 *
 * The caller folds `envoyFiltersKey(filters, proxy)` into the keys of the resources it patches.
 */
import type { ConfigResource } from "../../../config-model/resource.js"
import type { EnvoyFilterSpec } from "../../../config-model/schemas/envoy-filter.js"
import type { ProtoObject } from "../../cache/resource-spec.js"
import { type GeneratorNotice, noNotices } from "../../grpcgen/generator-notices.js"
import type { ProxyView } from "../proxy-view.js"
import { TypedConfig } from "../well-known.js"
import { patchClusters } from "./clusters.js"
import { patchListeners } from "./listeners.js"
import { addUnique, collectPatches, patchesOf, patchValue, warn } from "./patch-set.js"
import type { EnvoyFilterMemo } from "./patches.js"
import { patchRouteConfiguration, routeConfigurationContext } from "./routes.js"

const T = "type.googleapis.com/"
export const LISTENER_TYPE = `${T}envoy.config.listener.v3.Listener`
export const ROUTE_CONFIGURATION_TYPE = `${T}envoy.config.route.v3.RouteConfiguration`
export const CLUSTER_TYPE = `${T}envoy.config.cluster.v3.Cluster`
export const EXTENSION_CONFIG_TYPE = TypedConfig.typedExtensionConfig

export interface EnvoyFilterPatchOptions {
  /**
   * The service hostnames behind an inbound cluster (`inbound|port||`), whose name carries none,
   * for `match.cluster.service` (the reference uses the proxy's service instances at that port).
   */
  readonly inboundHosts?: (port: number) => ReadonlyArray<string>
  /** Where the filters' compiled patches are remembered (the push's `envoyFilterMemo`); else compiled per call. */
  readonly memo?: EnvoyFilterMemo
}

export interface Patched {
  readonly resources: ReadonlyArray<ProtoObject>
  readonly warnings: ReadonlyArray<GeneratorNotice>
}

const noHosts = (): ReadonlyArray<string> => []

/** Applies the `filters` (from `envoyFiltersForProxy`, in order) to `resources` of `typeUrl`. */
export const applyEnvoyFilters = (
  filters: ReadonlyArray<ConfigResource<EnvoyFilterSpec>>,
  proxy: ProxyView,
  typeUrl: string,
  resources: ReadonlyArray<ProtoObject>,
  options: EnvoyFilterPatchOptions = {},
): Patched => {
  if (filters.length === 0) return { resources, warnings: noNotices }
  const set = collectPatches(filters, proxy, options.memo)
  try {
    switch (typeUrl) {
      case LISTENER_TYPE:
        return { resources: patchListeners(set, resources), warnings: set.warnings }
      case ROUTE_CONFIGURATION_TYPE:
        return {
          resources: resources.map((rc) => patchRouteConfiguration(set, routeConfigurationContext(set, rc), rc)),
          warnings: set.warnings,
        }
      case CLUSTER_TYPE:
        return { resources: patchClusters(set, resources, options.inboundHosts ?? noHosts), warnings: set.warnings }
      case EXTENSION_CONFIG_TYPE: {
        const out = [...resources]
        for (const p of patchesOf(set, "EXTENSION_CONFIG")) addUnique(set, out, patchValue(p), p, "extension config")
        return { resources: out, warnings: set.warnings }
      }
      default:
        return { resources, warnings: set.warnings.length === 0 ? noNotices : set.warnings }
    }
  } catch (e) {
    // A bug or a value of a shape no check foresaw: serve the unpatched config rather than none.
    warn(set, `EnvoyFilter patching of ${typeUrl} failed (${String(e)}); resources served unpatched`)
    return { resources, warnings: set.warnings }
  }
}
