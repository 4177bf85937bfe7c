/**
 * What the Telemetry API and the mesh config's logging/tracing options add to a proxy's HTTP
 * connection managers, per direction: access logs and the tracing block, with a key naming
 * exactly the inputs (the applying Telemetries, the direction, the mesh options read), so that
 * listeners of proxies treated alike keep sharing their encodings.
 *
 * Metrics (`metrics.providers`, `metrics.overrides`) are reported, not applied: the reference
 * implements them in its own stats filters (Wasm or native builds), which are not part of the
 * proxy's public API.
 */
import type { ProtoObject } from "../../cache/resource-spec.js"
import type { GeneratorNotice } from "../../grpcgen/generator-notices.js"
import { digest, type PushContext } from "../../model/push-context.js"
import type { ProxyView } from "../proxy-view.js"
import { accessLogsFor, type Direction } from "./access-log.js"
import { selectTelemetries, type TelemetryResource } from "./telemetry-selection.js"
import { tracingFor } from "./tracing.js"

export type { Direction }

export interface TelemetryConfig {
  /** HCM (or TCP proxy) `access_log` entries. */
  readonly accessLog: ReadonlyArray<ProtoObject>
  /** HCM `tracing`; undefined: no tracing. */
  readonly tracing?: ProtoObject
  /** Names every input the two above depend on. */
  readonly key: string
  readonly warnings: ReadonlyArray<GeneratorNotice>
}

// Per push, per proxy scope key and direction: every replica of a workload reads one result.
const memo = new WeakMap<PushContext, Map<string, TelemetryConfig>>()
const specDigests = new WeakMap<TelemetryResource, string>()

const specDigest = (t: TelemetryResource): string => {
  let d = specDigests.get(t)
  if (d === undefined) {
    d = digest(JSON.stringify([t.meta.namespace, t.meta.name, t.spec]))
    specDigests.set(t, d)
  }
  return d
}

const metricsNotices = (telemetries: ReadonlyArray<TelemetryResource>): ReadonlyArray<GeneratorNotice> =>
  telemetries
    .filter((t) => (t.spec.metrics ?? []).some((m) => (m.overrides?.length ?? 0) > 0 || (m.providers?.length ?? 0) > 0))
    .map((t) => ({
      level: "warning" as const,
      scope: "model",
      message: `Telemetry ${t.meta.namespace}/${t.meta.name} field metrics: not applied: metrics providers and overrides configure the reference's stats filters (Wasm or native builds), which are not part of the proxy's public API`,
    }))

const compute = (push: PushContext, proxy: ProxyView, direction: Direction): TelemetryConfig => {
  const { telemetries, warnings: selectionWarnings } = selectTelemetries(push, proxy)
  const options = push.options.proxy
  const logs = accessLogsFor(telemetries, direction, options)
  const tracing = tracingFor(telemetries, direction, options)
  const key = digest(
    JSON.stringify([
      direction,
      telemetries.map(specDigest),
      options.accessLogFile,
      options.accessLogEncoding,
      options.enableTracing,
      options.traceSampling,
    ]),
  )
  return {
    accessLog: logs.accessLog,
    ...(tracing.tracing !== undefined ? { tracing: tracing.tracing } : {}),
    key,
    warnings: [...selectionWarnings, ...logs.warnings, ...tracing.warnings, ...metricsNotices(telemetries)],
  }
}

/** The access logs and tracing of `proxy`'s listeners of one direction. */
export const telemetryForProxy = (push: PushContext, proxy: ProxyView, direction: Direction): TelemetryConfig => {
  let byScope = memo.get(push)
  if (byScope === undefined) {
    byScope = new Map()
    memo.set(push, byScope)
  }
  const memoKey = `${proxy.scopeKey}|${direction}`
  let config = byScope.get(memoKey)
  if (config === undefined) {
    config = compute(push, proxy, direction)
    byScope.set(memoKey, config)
  }
  return config
}
