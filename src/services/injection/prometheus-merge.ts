/**
 * Metrics merging (mesh config `enablePrometheusMerge`, default on): the pod's
 * `prometheus.io/{scrape,port,path}` annotations are pointed at the agent's merged
 * `/stats/prometheus` on its status port, and the application's own scrape target moves into
 * `MESH_PROMETHEUS_ANNOTATIONS` (read by services/agent/status/metrics-merge.ts). Not done when
 * the pod says `prometheus.io/scrape: "false"`, opts out with `prometheus.mesh.io/merge-metrics:
 * "false"`, or already points at the status port (re-injection, or the user's own choice).
 */
import { Either } from "effect"
import { boolean } from "./annotation-values.js"
import { isObject, type Obj } from "./json.js"
import { OrchestratorNames } from "./names.js"

export interface MetricsMerge {
  readonly annotations: Readonly<Record<string, string>>
  /** MESH_PROMETHEUS_ANNOTATIONS, when the application had a scrape target to keep. */
  readonly envValue: string | undefined
}

const PROMETHEUS_KEYS = {
  scrape: OrchestratorNames.prometheusScrape,
  port: OrchestratorNames.prometheusPort,
  path: OrchestratorNames.prometheusPath,
} as const

export const metricsMerge = (
  annotations: Readonly<Record<string, string>>,
  meshConfig: Obj,
  mergeRequested: boolean,
  statusPort: number,
): MetricsMerge | undefined => {
  const enabled = isObject(meshConfig) && meshConfig.enablePrometheusMerge !== false
  const scrape = annotations[PROMETHEUS_KEYS.scrape]
  // An unparsable value counts as "scrape", as in the reference.
  const scrapeOff = scrape !== undefined && Either.getOrElse(boolean(scrape), () => true) === false
  if (!enabled || !mergeRequested || statusPort === 0 || scrapeOff) return undefined
  if (annotations[PROMETHEUS_KEYS.port] === String(statusPort)) return undefined
  const original: Record<string, string> = {}
  for (const [field, key] of Object.entries(PROMETHEUS_KEYS)) {
    const value = annotations[key]
    if (value !== undefined) original[field] = value
  }
  return {
    annotations: {
      [PROMETHEUS_KEYS.scrape]: "true",
      [PROMETHEUS_KEYS.port]: String(statusPort),
      [PROMETHEUS_KEYS.path]: "/stats/prometheus",
    },
    envValue: Object.keys(original).length > 0 ? JSON.stringify(original) : undefined,
  }
}
