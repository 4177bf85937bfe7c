/**
 * What `meshctl x metrics` does once its flags are read (loaded lazily): find the mesh's
 * Prometheus (the first running pod labelled `app=prometheus` in `-i`, reached at its pod IP, as
 * the dashboard reaches pods, on its container port named `http` when it declares one, else
 * 9090), run the five queries per workload against its
 * `/api/v1/query`, and print the table.
 */
import { Console, Data, Duration, Effect } from "effect"
import {
  metricsTable,
  parseWorkload,
  queryValue,
  type WorkloadMetrics,
  workloadQueries,
} from "../../../services/metrics/workload-metrics.js"
import { findPod, namedPort } from "../pod-lookup.js"
import type { MetricsArgs } from "./metrics-options.js"

/** The Prometheus pods' label and port (the reference's addon). */
const PROMETHEUS_SELECTOR = "app=prometheus"
const PROMETHEUS_PORT = 9090

class MetricsFailed extends Data.TaggedError("MetricsFailed")<{ readonly message: string }> {}

const query = (base: string, promql: string, timeout: Duration.Duration) =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(`${base}/api/v1/query?${new URLSearchParams({ query: promql })}`, {
        signal: AbortSignal.any([signal, AbortSignal.timeout(Duration.toMillis(timeout))]),
      })
      const text = await response.text()
      try {
        return JSON.parse(text) as unknown
      } catch {
        throw new Error(`HTTP ${response.status}: ${text.trim()}`)
      }
    },
    catch: (e) => {
      const error = e as Error
      const cause = error.cause instanceof Error ? ` (${error.cause.message})` : ""
      return new MetricsFailed({ message: `Prometheus ${base}: ${error.message}${cause}` })
    },
  }).pipe(
    Effect.flatMap((answer) => {
      const value = queryValue(answer)
      return typeof value === "string"
        ? Effect.fail(new MetricsFailed({ message: `Prometheus ${base}: ${value} (query ${promql})` }))
        : Effect.succeed(value)
    }),
  )

export const runMetrics = (args: MetricsArgs) =>
  Effect.gen(function* () {
    const prometheus = yield* findPod(args.global, {
      pod: "",
      selector: PROMETHEUS_SELECTOR,
      selectorNamespace: args.global.meshNamespace,
    }).pipe(Effect.mapError((e) => new MetricsFailed({ message: `cannot find Prometheus: ${e.message}` })))
    const host = prometheus.ip.includes(":") ? `[${prometheus.ip}]` : prometheus.ip
    const base = `http://${host}:${namedPort(prometheus.pod, "http", PROMETHEUS_PORT)}`
    const timeout = args.global.orchclientTimeout
    const rows: Array<WorkloadMetrics> = []
    for (const workload of args.workloads) {
      const queries = workloadQueries(parseWorkload(workload), args.duration)
      const [totalRps, errorRps, ...latencies] = yield* Effect.forEach(
        [queries.totalRps, queries.errorRps, ...queries.latencies],
        (promql) => query(base, promql, timeout),
        { concurrency: "unbounded" },
      )
      rows.push({ workload, totalRps: totalRps ?? 0, errorRps: errorRps ?? 0, latencies })
    }
    yield* Console.log(metricsTable(rows))
  }).pipe(Effect.scoped)
