/**
 * The mesh page's model: each proxy's state is its worst type's, NACKs carry their reason and
 * since when, rows are sorted worst first and served a bounded page at a time, and the push
 * figures are read from the metric series as `/metrics` exports them.
 */
import { describe, expect, it } from "vitest"
import {
  histogramOf,
  MAX_ISSUES,
  MAX_PAGE_SIZE,
  type MeshUiInput,
  meshUiModel,
  totalsBy,
  uiQueryOf,
} from "../../../src/services/debug/mesh-ui-model.js"
import type { ConnectionStatus, WatchStatus } from "../../../src/services/xds/server.js"

const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
const LDS = "type.googleapis.com/envoy.config.listener.v3.Listener"

const watch = (typeUrl: string, progress: Partial<WatchStatus>): WatchStatus => ({
  typeUrl,
  wildcard: true,
  names: [],
  ...progress,
})

const connection = (name: string, watches: ReadonlyArray<WatchStatus>, generator = ""): ConnectionStatus => ({
  id: `${name}-1`,
  peer: "127.0.0.1:1",
  nodeId: `sidecar~10.0.0.1~${name}.demo~demo.svc.cluster.local`,
  generator,
  proxy: { id: name, generator, metadata: { MESH_VERSION: "1.2.3", CLUSTER_ID: "c1" } },
  delta: false,
  connectedAt: Date.UTC(2026, 0, 1),
  watches,
})

const synced = (name: string) =>
  connection(name, [watch(CDS, { nonceSent: "a", nonceAcked: "a" }), watch(LDS, { nonceSent: "b", nonceAcked: "b" })])

const input = (
  connections: ReadonlyArray<ConnectionStatus>,
  query: Partial<MeshUiInput["query"]> = {},
): MeshUiInput => ({
  now: Date.UTC(2026, 0, 1, 0, 5),
  version: "test",
  connections,
  pushStats: { pushes: 3, version: "v3", lastPushStartedAt: 0 },
  configWarnings: [],
  refused: [],
  metrics: {},
  orchestrator: { server: undefined, registriesSynced: true, configSynced: true, leader: undefined },
  query: { page: 1, pageSize: 100, q: "", state: "", ...query },
})

describe("mesh page model", () => {
  it("shows a NACKed type with its reason and since when, and the proxy as NACKED, listed first", () => {
    const since = Date.UTC(2026, 0, 1, 0, 3)
    const nacked = connection("bad", [
      watch(CDS, { nonceSent: "a", nonceAcked: "a", lastError: "cluster x: bad lb policy", stateSince: since }),
      watch(LDS, { nonceSent: "b", nonceAcked: "b" }),
    ])
    const model = meshUiModel(input([synced("aaa"), nacked, connection("grpc", [], "grpc")]))
    expect(model.proxies.counts).toEqual({ NACKED: 1, STALE: 0, NOT_SENT: 1, SYNCED: 1 })
    const [first, second, third] = model.proxies.rows
    expect(first).toMatchObject({ name: "bad.demo", type: "sidecar", version: "1.2.3", cluster: "c1", state: "NACKED" })
    expect(first?.types[0]).toEqual({
      type: "cds",
      state: "NACKED",
      since: new Date(since).toISOString(),
      reason: "cluster x: bad lb policy",
      warnings: [],
    })
    expect(first?.types[1]?.state).toBe("SYNCED")
    expect(second).toMatchObject({ type: "proxyless gRPC", state: "NOT_SENT" })
    expect(third?.state).toBe("SYNCED")
  })

  it("serves one bounded page of the matching proxies", () => {
    const many = Array.from({ length: 10_000 }, (_, i) => synced(`p${String(i).padStart(5, "0")}`))
    const model = meshUiModel(input(many, { page: 3, pageSize: 50 }))
    expect(model.proxies).toMatchObject({ total: 10_000, matching: 10_000, page: 3, pages: 200, pageSize: 50 })
    expect(model.proxies.rows.map((r) => r.name).slice(0, 2)).toEqual(["p00100.demo", "p00101.demo"])
    // The JSON of a page stays small however large the mesh.
    expect(JSON.stringify(model).length).toBeLessThan(40_000)
    const searched = meshUiModel(input(many, { q: "p0999" }))
    expect(searched.proxies.matching).toBe(10)
    const past = meshUiModel(input(many, { page: 999_999 }))
    expect(past.proxies.page).toBe(100)
    expect(meshUiModel(input(many, { state: "STALE" })).proxies.rows).toEqual([])
  })

  it("bounds the query a caller sends", () => {
    const query = uiQueryOf(new URLSearchParams({ page: "-4", pageSize: "100000", q: "x".repeat(5000), state: "<b>" }))
    expect(query).toEqual({ page: 1, pageSize: MAX_PAGE_SIZE, q: "x".repeat(256), state: "" })
    expect(uiQueryOf(new URLSearchParams({ state: "NACKED", page: "abc" }))).toMatchObject({ state: "NACKED", page: 1 })
  })

  it("cuts refused resources and warnings, keeping their totals", () => {
    const issue = { file: "/c/a.yaml", documentIndex: 0, path: "spec.x", message: "bad" }
    const model = meshUiModel({ ...input([]), refused: Array.from({ length: MAX_ISSUES + 5 }, () => issue) })
    expect(model.config.refusedTotal).toBe(MAX_ISSUES + 5)
    expect(model.config.refused).toHaveLength(MAX_ISSUES)
  })

  it("reads pushes per type and histograms from the metric series", () => {
    const series = [
      { metricName: "pilot_xds_push_time_bucket", labels: { le: "0.1", type: "cds" }, value: 2 },
      { metricName: "pilot_xds_push_time_bucket", labels: { le: "+Inf", type: "cds" }, value: 3 },
      { metricName: "pilot_xds_push_time_bucket", labels: { le: "0.01", type: "eds" }, value: 1 },
      { metricName: "pilot_xds_push_time_bucket", labels: { le: "0.1", type: "eds" }, value: 1 },
      { metricName: "pilot_xds_push_time_bucket", labels: { le: "+Inf", type: "eds" }, value: 1 },
      { metricName: "pilot_xds_push_time_count", labels: { type: "cds" }, value: 3 },
      { metricName: "pilot_xds_push_time_count", labels: { type: "eds" }, value: 1 },
      { metricName: "pilot_xds_push_time_sum", labels: { type: "cds" }, value: 0.5 },
    ]
    expect(histogramOf(series)).toEqual({
      buckets: [
        { le: "0.01", count: 1 },
        { le: "0.1", count: 3 },
        { le: "+Inf", count: 4 },
      ],
      count: 4,
      sum: 0.5,
    })
    expect(
      totalsBy(
        [
          { labels: { type: "cds" }, value: 2 },
          { labels: { type: "eds" }, value: 5 },
          { labels: { type: "cds" }, value: 1 },
        ],
        "type",
      ),
    ).toEqual({ cds: 3, eds: 5 })
    const model = meshUiModel({
      ...input([]),
      metrics: {
        meshca_server_root_cert_expiry_timestamp: [{ labels: {}, value: 1_900_000_000 }],
        meshca_server_success_cert_issuance_count: [{ labels: {}, value: 7 }],
      },
    })
    expect(model.certificates).toMatchObject({ issued: 7, rootExpiry: new Date(1_900_000_000_000).toISOString() })
  })
})
