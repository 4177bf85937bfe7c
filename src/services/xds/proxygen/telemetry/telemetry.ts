/**
 * What the Telemetry API and the mesh config's logging/tracing options add to a proxy's HTTP
 * connection managers and TCP proxies, per direction: access logs and the tracing block, with a
 * key naming the inputs (the applying Telemetries, the direction, the mesh options read) and
 * what they resolved to (extension providers, their clusters, the tracer's service name), so
 * that listeners of proxies treated alike keep sharing their encodings.
 *
 * Metrics (`metrics.providers`, `metrics.overrides`) are reported, not applied: the reference
 * implements them in its own stats filters (Wasm or native builds), which are not part of the
 * proxy's public API.
 */

import type { GeneratorNotice } from "../../grpcgen/generator-notices.js"
import { type LocalSlot, memoOf } from "../../model/local-slot.js"
import { digest, type PushContext } from "../../model/push-context.js"
import type { AccessLog, HttpConnectionManager_Tracing } from "../../protocol/xds-types.js"
import { providerCluster } from "../provider-cluster.js"
import type { ProxyView } from "../proxy-view.js"
import { accessLogsFor, type ClusterLookup, type Direction } from "./access-log.js"
import { selectTelemetries, type TelemetryResource } from "./telemetry-selection.js"
import { tracingFor } from "./tracing.js"

export type { Direction }

export interface TelemetryConfig {
  /** HCM `access_log` entries. */
  readonly accessLog: ReadonlyArray<AccessLog>
  /** TCP proxy `access_log` entries. */
  readonly tcpAccessLog: ReadonlyArray<AccessLog>
  /** HCM `tracing`; undefined: no tracing. */
  readonly tracing?: HttpConnectionManager_Tracing
  /** Names every input the two above depend on. */
  readonly key: string
  readonly warnings: ReadonlyArray<GeneratorNotice>
}

// Per push, per proxy scope key and direction: every replica of a workload reads one result.
const memo: LocalSlot<Map<string, TelemetryConfig>, PushContext> = { make: () => new Map() }
/** By resource (shared by a lineage of contexts, like the views). */
const specDigests: LocalSlot<WeakMap<TelemetryResource, string>> = { make: () => new WeakMap() }

const specDigest = (push: PushContext, t: TelemetryResource): string =>
  memoOf(push.memo.local(specDigests), t, () => digest(JSON.stringify([t.meta.namespace, t.meta.name, t.spec])))

const metricsNotices = (telemetries: ReadonlyArray<TelemetryResource>): ReadonlyArray<GeneratorNotice> =>
  telemetries
    .filter((t) => (t.spec.metrics ?? []).some((m) => (m.overrides?.length ?? 0) > 0 || (m.providers?.length ?? 0) > 0))
    .map((t) => ({
      level: "warning" as const,
      scope: "model",
      message: `Telemetry ${t.meta.namespace}/${t.meta.name} field metrics: not applied: metrics providers and overrides configure the reference's stats filters (Wasm or native builds), which are not part of the proxy's public API`,
    }))

/** The labels naming a workload's service, most specific first (both API groups' spelling). */
const SERVICE_NAME_LABELS = ["service.mesh.io/canonical-name", "service.istio.io/canonical-name", "app"]

/** `<app>.<namespace>`, the name spans are reported under (labels only: replicas share it). */
const tracingServiceName = (proxy: ProxyView): string => {
  const app = SERVICE_NAME_LABELS.map((l) => proxy.labels[l]).find((v) => v !== undefined && v !== "")
  return `${app ?? "mesh-proxy"}.${proxy.namespace}`
}

const compute = (push: PushContext, proxy: ProxyView, direction: Direction): TelemetryConfig => {
  const { telemetries, warnings: selectionWarnings } = selectTelemetries(push, proxy)
  const options = push.options.proxy
  const lookup: ClusterLookup = (service) => providerCluster(push, service)
  const logs = accessLogsFor(telemetries, direction, options, lookup)
  const tracing = tracingFor(telemetries, direction, options, { lookup, serviceName: tracingServiceName(proxy) })
  const key = digest(
    JSON.stringify([
      direction,
      telemetries.map((t) => specDigest(push, t)),
      options.accessLogFile,
      options.accessLogEncoding,
      options.enableTracing,
      options.traceSampling,
      // What the names resolved to (providers, clusters, service name) is only in the output.
      logs.accessLog,
      logs.tcpAccessLog,
      tracing.tracing ?? null,
    ]),
  )
  return {
    accessLog: logs.accessLog,
    tcpAccessLog: logs.tcpAccessLog,
    ...(tracing.tracing !== undefined ? { tracing: tracing.tracing } : {}),
    key,
    warnings: [...selectionWarnings, ...logs.warnings, ...tracing.warnings, ...metricsNotices(telemetries)],
  }
}

/** The access logs and tracing of `proxy`'s listeners of one direction. */
export const telemetryForProxy = (push: PushContext, proxy: ProxyView, direction: Direction): TelemetryConfig => {
  const byScope = push.local(memo)
  const memoKey = `${proxy.scopeKey}|${direction}`
  let config = byScope.get(memoKey)
  if (config === undefined) {
    config = compute(push, proxy, direction)
    byScope.set(memoKey, config)
  }
  return config
}
