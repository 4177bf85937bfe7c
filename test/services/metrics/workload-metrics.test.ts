import { Duration } from "effect"
import { describe, expect, it } from "vitest"
import {
  formatLatency,
  metricsTable,
  parseWorkload,
  queryValue,
  workloadQueries,
} from "../../../src/services/metrics/workload-metrics.js"

describe("workloadQueries", () => {
  it("queries the destination's reports of the workload over the window", () => {
    const q = workloadQueries(parseWorkload("reviews-v1.bookinfo"), Duration.minutes(5))
    expect(q.totalRps).toBe(
      'sum(rate(mesh_requests_total{destination_workload=~"reviews-v1.*", destination_workload_namespace=~"bookinfo.*", reporter="destination"}[5m0s]))',
    )
    expect(q.errorRps).toContain('reporter="destination", response_code=~"5.."}[5m0s]')
    expect(q.latencies).toHaveLength(3)
    expect(q.latencies[0]).toBe(
      'histogram_quantile(0.5, sum(rate(mesh_request_duration_milliseconds_bucket{destination_workload=~"reviews-v1.*", destination_workload_namespace=~"bookinfo.*", reporter="destination"}[5m0s])) by (le))',
    )
    expect(q.latencies[2]).toMatch(/^histogram_quantile\(0\.99, /)
  })

  it("matches every namespace when none is given", () => {
    expect(parseWorkload("productpage")).toEqual({ name: "productpage", namespace: "" })
    expect(workloadQueries(parseWorkload("productpage"), Duration.minutes(1)).totalRps).toContain(
      'destination_workload_namespace=~".*"',
    )
  })
})

describe("queryValue", () => {
  it("reads the first sample, 0 for no series, NaN as NaN", () => {
    const vector = (value: string) => ({
      status: "success",
      data: { resultType: "vector", result: [{ metric: {}, value: [1700000000, value] }] },
    })
    expect(queryValue(vector("2.5"))).toBe(2.5)
    expect(queryValue(vector("NaN"))).toBeNaN()
    expect(queryValue({ status: "success", data: { resultType: "vector", result: [] } })).toBe(0)
    expect(queryValue({ status: "success", data: { resultType: "scalar", result: [1, "4"] } })).toBe(4)
  })
  it("explains a failed query", () => {
    expect(queryValue({ status: "error", error: "parse error" })).toBe("query failed: parse error")
  })
})

describe("metricsTable", () => {
  it("prints Go durations and three decimals in the reference's widths", () => {
    expect(formatLatency(4.75)).toBe("4.75ms")
    expect(formatLatency(1500)).toBe("1.5s")
    expect(formatLatency(Number.NaN)).toBe("0s")
    const table = metricsTable([{ workload: "reviews", totalRps: 10.5, errorRps: 0.25, latencies: [5, 9.9, 120] }])
    const [header, row] = table.split("\n")
    expect(header).toBe(
      `${"WORKLOAD".padStart(40)} ${"TOTAL RPS".padStart(12)} ${"ERROR RPS".padStart(12)} ${"P50 LATENCY".padStart(12)} ${"P90 LATENCY".padStart(12)} ${"P99 LATENCY".padStart(12)}`,
    )
    expect(row!.trim().split(/\s+/)).toEqual(["reviews", "10.500", "0.250", "5ms", "9.9ms", "120ms"])
  })
})
