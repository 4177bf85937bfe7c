/**
 * What `/debug/ui` shows, as the JSON the page is rendered from and refreshed with
 * (`/debug/ui/state`): connected proxies with their per-type sync state, config warnings and
 * refused resources, push figures (the same series `/metrics` exports), certificates, and the
 * orchestrator connection and leadership. Pure; bounded for large meshes: proxies are sorted
 * worst first and served one page at a time (at most `MAX_PAGE_SIZE` rows), and warnings and
 * refusals are cut at `MAX_ISSUES` with their totals kept.
 */
import type { ValidationIssue } from "../config-model/resource.js"
import { nodeName } from "../xds/protocol/node-id.js"
import { type SyncState, syncStateOf } from "../xds/protocol/sync-state.js"
import type { ConnectionStatus, PushStats } from "../xds/server.js"
import { shortType } from "./views.js"

export const DEFAULT_PAGE_SIZE = 100
export const MAX_PAGE_SIZE = 500
export const MAX_ISSUES = 200
/** A caller's search text is cut to this many characters. */
export const MAX_QUERY_LENGTH = 256

/** Worst first: a proxy's state is the worst of its types'. */
const STATE_ORDER: ReadonlyArray<SyncState> = ["NACKED", "STALE", "NOT_SENT", "SYNCED"]
const rank = (state: SyncState): number => STATE_ORDER.indexOf(state)

export interface TypeSync {
  readonly type: string
  readonly state: SyncState
  /** ISO time the state began ("" when unknown). */
  readonly since: string
  /** The NACK's reason ("" unless NACKED). */
  readonly reason: string
  /** Requested names without a resource, and why. */
  readonly warnings: ReadonlyArray<string>
}

export interface ProxyRow {
  readonly nodeId: string
  readonly name: string
  readonly connectionId: string
  /** The node type (`sidecar`, `router`, ...), `proxyless gRPC` for gRPC clients. */
  readonly type: string
  readonly version: string
  readonly cluster: string
  readonly delta: boolean
  readonly connectedAt: string
  readonly state: SyncState
  readonly types: ReadonlyArray<TypeSync>
}

/** A histogram as its cumulative buckets (`le` = upper bound in seconds, "+Inf" last). */
export interface Histogram {
  readonly buckets: ReadonlyArray<{ readonly le: string; readonly count: number }>
  readonly count: number
  readonly sum: number
}

/** One series of a metric as the registry reports it. */
export interface MetricValue {
  readonly value: number
  readonly labels: Readonly<Record<string, string | number>>
  readonly metricName?: string
}

/** The metric series the page reads, by metric name (absent when not registered). */
export type MetricReadings = Readonly<Record<string, ReadonlyArray<MetricValue> | undefined>>

/** The metrics `metricReadings` must hold for the page. */
export const UI_METRICS = [
  "pilot_xds_pushes",
  "pilot_debounce_time",
  "pilot_xds_push_time",
  "pilot_proxy_convergence_time",
  "pilot_total_xds_rejects",
  "pilot_xds",
  "meshca_server_success_cert_issuance_count",
  "meshca_server_csr_count",
  "meshca_server_csr_sign_err_count",
  "meshca_server_root_cert_expiry_timestamp",
  "meshca_server_cert_chain_expiry_timestamp",
] as const

export interface OrchestratorFacts {
  /** The API server URL; undefined without an orchestrator (file mode). */
  readonly server: string | undefined
  /** Whether the API server answered the last probe (undefined before one, or without one). */
  readonly reachable?: boolean
  /** Why the last probe failed. */
  readonly error?: string
  /** When the last probe ended (ISO). */
  readonly checkedAt?: string
  readonly registriesSynced: boolean
  readonly configSynced: boolean
  /** Undefined when leader election is not running here. */
  readonly leader: { readonly identity: string; readonly isLeader: boolean } | undefined
}

export interface UiQuery {
  readonly page: number
  readonly pageSize: number
  /** Words every listed proxy's id, type or version must contain. */
  readonly q: string
  /** Only proxies in this state ("" = all). */
  readonly state: string
}

export interface MeshUiInput {
  readonly now: number
  readonly version: string
  readonly connections: ReadonlyArray<ConnectionStatus>
  readonly pushStats: PushStats
  readonly configWarnings: ReadonlyArray<{
    readonly kind: string
    readonly namespace: string
    readonly name: string
    readonly file?: string
    readonly documentIndex?: number
    readonly path: string
    readonly message: string
  }>
  readonly refused: ReadonlyArray<ValidationIssue>
  readonly metrics: MetricReadings
  readonly orchestrator: OrchestratorFacts
  readonly query: UiQuery
}

const text = (value: unknown): string => (typeof value === "string" ? value : "")

const iso = (millis: number | undefined): string =>
  millis === undefined || !Number.isFinite(millis) || millis <= 0 ? "" : new Date(millis).toISOString()

const proxyType = (c: ConnectionStatus): string =>
  c.generator === "grpc" ? "proxyless gRPC" : (c.nodeId.split("~")[0] ?? "") || "unknown"

/** A proxy's state: the worst of its types' (NOT_SENT before it watches anything). */
const proxyState = (c: ConnectionStatus): SyncState => {
  if (c.watches.length === 0) return "NOT_SENT"
  let worst: SyncState = "SYNCED"
  for (const w of c.watches) {
    const state = syncStateOf(w)
    if (rank(state) < rank(worst)) worst = state
  }
  return worst
}

const versionOf = (c: ConnectionStatus): string =>
  text(c.proxy?.metadata.MESH_VERSION) || text(c.proxy?.metadata.ISTIO_VERSION)

export const proxyRow = (c: ConnectionStatus): ProxyRow => ({
  nodeId: c.nodeId,
  name: nodeName(c.nodeId),
  connectionId: c.id,
  type: proxyType(c),
  version: versionOf(c),
  cluster: text(c.proxy?.metadata.CLUSTER_ID),
  delta: c.delta,
  connectedAt: iso(c.connectedAt),
  state: proxyState(c),
  types: c.watches.map(
    (w): TypeSync => ({
      type: shortType(w.typeUrl),
      state: syncStateOf(w),
      since: iso(w.stateSince),
      reason: w.lastError ?? "",
      warnings: w.warnings ?? [],
    }),
  ),
})

/** Cumulative buckets, count and sum of a histogram's series, added up over their labels. */
export const histogramOf = (values: ReadonlyArray<MetricValue> | undefined): Histogram => {
  const buckets = new Map<string, number>()
  let count = 0
  let sum = 0
  for (const v of values ?? []) {
    const name = v.metricName ?? ""
    if (name.endsWith("_bucket")) {
      const le = String(v.labels.le ?? "")
      buckets.set(le, (buckets.get(le) ?? 0) + v.value)
    } else if (name.endsWith("_count")) count += v.value
    else if (name.endsWith("_sum")) sum += v.value
  }
  const bound = (le: string) => (le === "+Inf" ? Number.POSITIVE_INFINITY : Number(le))
  return {
    buckets: [...buckets.entries()].sort(([a], [b]) => bound(a) - bound(b)).map(([le, n]) => ({ le, count: n })),
    count,
    sum,
  }
}

/** A counter's or gauge's values added up per value of `label`. */
export const totalsBy = (values: ReadonlyArray<MetricValue> | undefined, label: string): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const v of values ?? []) {
    const key = String(v.labels[label] ?? "")
    out[key] = (out[key] ?? 0) + v.value
  }
  return out
}

const total = (values: ReadonlyArray<MetricValue> | undefined): number =>
  (values ?? []).reduce((sum, v) => sum + v.value, 0)

/** A gauge holding a Unix time in seconds, as ISO text ("" when unset). */
const timestamp = (values: ReadonlyArray<MetricValue> | undefined): string => {
  const seconds = values?.[0]?.value
  return seconds === undefined || seconds <= 0 ? "" : iso(seconds * 1000)
}

const matches = (c: ConnectionStatus, words: ReadonlyArray<string>): boolean => {
  if (words.length === 0) return true
  const haystack = `${c.nodeId} ${proxyType(c)} ${versionOf(c)} ${text(c.proxy?.metadata.CLUSTER_ID)}`.toLowerCase()
  return words.every((w) => haystack.includes(w))
}

/** Page number, size, search and state filter from a request's query, bounded. */
export const uiQueryOf = (params: URLSearchParams): UiQuery => {
  const int = (name: string, fallback: number) => {
    const n = Number.parseInt(params.get(name) ?? "", 10)
    return Number.isFinite(n) ? n : fallback
  }
  const state = params.get("state") ?? ""
  return {
    page: Math.max(1, Math.min(int("page", 1), 1_000_000)),
    pageSize: Math.max(1, Math.min(int("pageSize", DEFAULT_PAGE_SIZE), MAX_PAGE_SIZE)),
    q: (params.get("q") ?? "").slice(0, MAX_QUERY_LENGTH),
    state: (STATE_ORDER as ReadonlyArray<string>).includes(state) ? state : "",
  }
}

export const meshUiModel = (input: MeshUiInput) => {
  // Only the page's rows are built: the state of every proxy is all the counts and order need.
  const all = input.connections
    .map((c) => ({ c, state: proxyState(c) }))
    .sort((a, b) => rank(a.state) - rank(b.state) || (a.c.nodeId < b.c.nodeId ? -1 : a.c.nodeId > b.c.nodeId ? 1 : 0))
  const counts: Record<SyncState, number> = { NACKED: 0, STALE: 0, NOT_SENT: 0, SYNCED: 0 }
  for (const { state } of all) counts[state]++
  const words = input.query.q.toLowerCase().split(/\s+/).filter(Boolean)
  const selected = all.filter(
    ({ c, state }) => (input.query.state === "" || state === input.query.state) && matches(c, words),
  )
  const { pageSize } = input.query
  const pages = Math.max(1, Math.ceil(selected.length / pageSize))
  const page = Math.min(input.query.page, pages)
  const m = input.metrics
  return {
    generatedAt: iso(input.now),
    version: input.version,
    proxies: {
      total: all.length,
      counts,
      matching: selected.length,
      page,
      pages,
      pageSize,
      q: input.query.q,
      state: input.query.state,
      rows: selected.slice((page - 1) * pageSize, page * pageSize).map(({ c }) => proxyRow(c)),
    },
    config: {
      warningsTotal: input.configWarnings.length,
      warnings: input.configWarnings.slice(0, MAX_ISSUES),
      refusedTotal: input.refused.length,
      refused: input.refused.slice(0, MAX_ISSUES),
    },
    push: {
      pushes: input.pushStats.pushes,
      pushVersion: input.pushStats.version,
      lastPushStartedAt: iso(input.pushStats.lastPushStartedAt),
      pushesByType: totalsBy(m.pilot_xds_pushes, "type"),
      rejectsByType: totalsBy(m.pilot_total_xds_rejects, "type"),
      debounce: histogramOf(m.pilot_debounce_time),
      pushTime: histogramOf(m.pilot_xds_push_time),
      convergence: histogramOf(m.pilot_proxy_convergence_time),
    },
    certificates: {
      issued: total(m.meshca_server_success_cert_issuance_count),
      requests: total(m.meshca_server_csr_count),
      signErrors: total(m.meshca_server_csr_sign_err_count),
      rootExpiry: timestamp(m.meshca_server_root_cert_expiry_timestamp),
      chainExpiry: timestamp(m.meshca_server_cert_chain_expiry_timestamp),
    },
    orchestrator: input.orchestrator,
  }
}

export type MeshUiModel = ReturnType<typeof meshUiModel>
