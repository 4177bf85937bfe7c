/**
 * `meshctl x metrics`: the Prometheus queries for one workload's server-side view (reports with
 * `reporter="destination"`) over a window, reading their answers, and the table. Metric and
 * label names are the reference telemetry's with the mesh prefix: `mesh_requests_total`,
 * `mesh_request_duration_milliseconds_bucket`, `destination_workload`,
 * `destination_workload_namespace`, `response_code`.
 */
import type { Duration } from "effect"
import { formatGoDuration, formatGoDurationNanos } from "../config/duration.js"

export const REQUESTS_TOTAL = "mesh_requests_total"
export const REQUEST_DURATION = "mesh_request_duration_milliseconds"
export const QUANTILES = [0.5, 0.9, 0.99] as const

export interface WorkloadRef {
  readonly name: string
  /** "" matches every namespace. */
  readonly namespace: string
}

/** `<name>[.<namespace>]`. */
export const parseWorkload = (text: string): WorkloadRef => {
  const dot = text.indexOf(".")
  return dot < 0 ? { name: text, namespace: "" } : { name: text.slice(0, dot), namespace: text.slice(dot + 1) }
}

/** Regex metacharacters escaped, so a name is matched literally as a prefix. */
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\\\$&")

const selector = (workload: WorkloadRef, extra = "") =>
  `{destination_workload=~"${literal(workload.name)}.*", destination_workload_namespace=~"${literal(workload.namespace)}.*", reporter="destination"${extra}}`

export interface WorkloadQueries {
  readonly totalRps: string
  readonly errorRps: string
  /** One per QUANTILES entry. */
  readonly latencies: ReadonlyArray<string>
}

export const workloadQueries = (workload: WorkloadRef, window: Duration.Duration): WorkloadQueries => {
  const range = formatGoDuration(window)
  return {
    totalRps: `sum(rate(${REQUESTS_TOTAL}${selector(workload)}[${range}]))`,
    errorRps: `sum(rate(${REQUESTS_TOTAL}${selector(workload, ', response_code=~"5.."')}[${range}]))`,
    latencies: QUANTILES.map(
      (q) => `histogram_quantile(${q}, sum(rate(${REQUEST_DURATION}_bucket${selector(workload)}[${range}])) by (le))`,
    ),
  }
}

/**
 * The scalar of a Prometheus `/api/v1/query` answer: the first sample of a vector (0 when the
 * vector is empty: no traffic), or a scalar; a string says why the answer is unusable.
 */
export const queryValue = (answer: unknown): number | string => {
  const body = answer as {
    status?: string
    error?: string
    data?: { resultType?: string; result?: unknown }
  }
  if (body?.status !== "success") return `query failed: ${body?.error ?? "unexpected answer"}`
  const result = body.data?.result
  const sample =
    body.data?.resultType === "scalar"
      ? result
      : Array.isArray(result)
        ? (result[0] as { value?: unknown } | undefined)?.value
        : undefined
  if (body.data?.resultType === "vector" && Array.isArray(result) && result.length === 0) return 0
  if (!Array.isArray(sample) || sample.length < 2) return "query answer has no sample"
  const value = Number(sample[1])
  return Number.isNaN(value) && sample[1] !== "NaN" ? `not a number: ${String(sample[1])}` : value
}

export interface WorkloadMetrics {
  readonly workload: string
  readonly totalRps: number
  readonly errorRps: number
  /** Milliseconds, per QUANTILES entry (NaN when there is no data). */
  readonly latencies: ReadonlyArray<number>
}

/** Milliseconds as Go prints a duration (`4.75ms`, `1.2s`); no data (NaN) prints `0s`. */
export const formatLatency = (millis: number): string =>
  Number.isFinite(millis) ? formatGoDurationNanos(BigInt(Math.round(millis * 1_000_000))) : "0s"

const HEADER = ["WORKLOAD", "TOTAL RPS", "ERROR RPS", "P50 LATENCY", "P90 LATENCY", "P99 LATENCY"] as const

/** Right-aligned columns, the workload 40 wide and the others 12, as the reference prints them. */
export const metricsTable = (rows: ReadonlyArray<WorkloadMetrics>): string => {
  const line = (cells: ReadonlyArray<string>) => cells.map((cell, i) => cell.padStart(i === 0 ? 40 : 12)).join(" ")
  return [
    line(HEADER),
    ...rows.map((row) =>
      line([row.workload, row.totalRps.toFixed(3), row.errorRps.toFixed(3), ...row.latencies.map(formatLatency)]),
    ),
  ].join("\n")
}
