/**
 * The introspection listener's HTML pages (the reference's ControlZ topics), one per topic at
 * `/<topic>z/` beside its JSON view at `/<topic>j/`: home, scopes, memory, environment, process,
 * arguments, version, metrics and signals. Pure: each page is built from the figures its route
 * read; every value goes through `escapeHtml`, and the scripts only read JSON and set text.
 */
import type { ScopeState } from "../logging/logging.js"
import { LOG_LEVELS } from "../logging/scopes.js"
import { escapeHtml, htmlPage, htmlTable, keyValueTable, type NavLink, td } from "./html.js"
import type { RuntimeSample } from "./runtime-stats.js"

export const TOPICS: ReadonlyArray<NavLink & { readonly json: string; readonly help: string }> = [
  { href: "/scopez/", title: "Logging scopes", json: "/scopej/", help: "Each scope's output and stack-trace level" },
  { href: "/memz/", title: "Memory", json: "/runtimej/", help: "Heap, RSS, garbage collections, event-loop delay" },
  { href: "/envz/", title: "Environment", json: "/envj/", help: "Environment variables (secrets redacted)" },
  { href: "/procz/", title: "Process", json: "/procj/", help: "Process ids, user, working directory, uptime" },
  { href: "/argsz/", title: "Arguments", json: "/argsj/", help: "The command line" },
  { href: "/versionz/", title: "Version", json: "/versionj/", help: "The build" },
  { href: "/metricz/", title: "Metrics", json: "/metricj/", help: "The metric registry, searchable" },
  { href: "/signalz/", title: "Signals", json: "", help: "Signals the process can be sent from here" },
]

const NAV: ReadonlyArray<NavLink> = [{ href: "/", title: "Home" }, ...TOPICS]

const page = (process: string, title: string, body: string, script?: string) =>
  htmlPage({
    title: `${title} — ${process}`,
    heading: `${process} — ${title}`,
    nav: NAV,
    body,
    ...(script !== undefined ? { script } : {}),
  })

const mib = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MiB`

export interface HomeFacts {
  readonly process: string
  readonly pid: number
  readonly hostname: string
  readonly sample: RuntimeSample
}

export const homePage = (facts: HomeFacts): string =>
  page(
    facts.process,
    "introspection",
    keyValueTable([
      ["process", facts.process],
      ["pid", facts.pid],
      ["hostname", facts.hostname],
      ["heap used", mib(facts.sample.memory.heapUsed)],
      ["garbage collections", facts.sample.gc.count],
      ["uptime (s)", Math.round(facts.sample.uptimeSeconds)],
      ["current time", new Date(facts.sample.at).toISOString()],
    ]) +
      htmlTable(["topic", "what", "JSON"], TOPICS, (t) => [
        `<td><a href="${escapeHtml(t.href)}">${escapeHtml(t.title)}</a></td>`,
        td(t.help),
        t.json === "" ? td("") : `<td><a href="${escapeHtml(t.json)}">${escapeHtml(t.json)}</a></td>`,
      ]),
  )

const levelSelect = (scope: string, field: "output_level" | "stack_trace_level", current: string): string =>
  `<select data-scope="${escapeHtml(scope)}" data-field="${field}" aria-label="${escapeHtml(`${scope} ${field}`)}">` +
  LOG_LEVELS.map(
    (level) => `<option value="${level}"${level === current ? " selected" : ""}>${escapeHtml(level)}</option>`,
  ).join("") +
  `</select>`

/** Sends each change as the JSON API's `PUT /scopej/<scope>` and says what the server answered. */
const SCOPES_SCRIPT = `
const status = document.getElementById("status")
for (const select of document.querySelectorAll("select[data-scope]")) {
  select.addEventListener("change", async () => {
    const scope = select.dataset.scope, field = select.dataset.field
    try {
      const response = await fetch("/scopej/" + encodeURIComponent(scope), {
        method: "PUT", headers: { "content-type": "application/json" },
        body: JSON.stringify({ [field]: select.value }),
      })
      const text = await response.text()
      status.className = response.ok ? "" : "err"
      status.textContent = response.ok ? scope + ": " + field + " set to " + select.value
        : "refused (" + response.status + "): " + text
    } catch (error) { status.className = "err"; status.textContent = String(error) }
  })
}`

export const scopesPage = (process: string, scopes: ReadonlyArray<ScopeState>): string =>
  page(
    process,
    "logging scopes",
    `<p id="status" role="status" class="muted">Changes are sent as PUT /scopej/&lt;scope&gt; (from localhost only).</p>` +
      htmlTable(
        ["scope", "output level", "stack trace level", "log callers"],
        scopes,
        (s) => [
          td(s.name),
          `<td>${levelSelect(s.name, "output_level", s.outputLevel)}</td>`,
          `<td>${levelSelect(s.name, "stack_trace_level", s.stackTraceLevel)}</td>`,
          td(s.logCallers ? "yes" : "no"),
        ],
        ` id="scopes"`,
      ),
    SCOPES_SCRIPT,
  )

/** The memory page's figures, flattened to `[id, label, value]` rows the script can refresh. */
export const memoryRows = (sample: RuntimeSample): ReadonlyArray<readonly [string, string, string]> => [
  ["rss", "resident set (RSS)", mib(sample.memory.rss)],
  ["heapUsed", "heap used", mib(sample.memory.heapUsed)],
  ["heapTotal", "heap total", mib(sample.memory.heapTotal)],
  ["heapLimit", "heap limit", mib(sample.heap.heapSizeLimit)],
  ["external", "external", mib(sample.memory.external)],
  ["arrayBuffers", "array buffers", mib(sample.memory.arrayBuffers)],
  ["gcCount", "garbage collections", String(sample.gc.count)],
  ["gcPause", "total GC pause", `${sample.gc.pauseMs.toFixed(1)} ms`],
  [
    "gcKinds",
    "collections by kind",
    Object.entries(sample.gc.byKind)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ") || "none yet",
  ],
  [
    "loopDelay",
    `event-loop delay (last ${sample.eventLoopDelay.windowSeconds || 5} s)`,
    `p50 ${sample.eventLoopDelay.p50} ms, p99 ${sample.eventLoopDelay.p99} ms, max ${sample.eventLoopDelay.max} ms`,
  ],
  ["uptime", "uptime", `${Math.round(sample.uptimeSeconds)} s`],
  ["sampledAt", "sampled at", new Date(sample.at).toISOString()],
]

/** Refreshes each figure from `/runtimej/` every second (the same arithmetic as `memoryRows`). */
const MEMORY_SCRIPT = `
const mib = (b) => (b / 1048576).toFixed(1) + " MiB"
const set = (id, text) => { const cell = document.getElementById("m-" + id); if (cell) cell.textContent = text }
const refresh = async () => {
  try {
    const s = await (await fetch("/runtimej/")).json()
    set("rss", mib(s.memory.rss)); set("heapUsed", mib(s.memory.heapUsed)); set("heapTotal", mib(s.memory.heapTotal))
    set("heapLimit", mib(s.heap.heapSizeLimit)); set("external", mib(s.memory.external))
    set("arrayBuffers", mib(s.memory.arrayBuffers)); set("gcCount", String(s.gc.count))
    set("gcPause", s.gc.pauseMs.toFixed(1) + " ms")
    set("gcKinds", Object.entries(s.gc.byKind).map(([k, n]) => k + " " + n).join(", ") || "none yet")
    const d = s.eventLoopDelay
    set("loopDelay", "p50 " + d.p50 + " ms, p99 " + d.p99 + " ms, max " + d.max + " ms")
    set("uptime", Math.round(s.uptimeSeconds) + " s"); set("sampledAt", new Date(s.at).toISOString())
    document.getElementById("refresh").textContent = "refreshed " + new Date().toLocaleTimeString()
  } catch (error) { document.getElementById("refresh").textContent = "refresh failed: " + error }
}
setInterval(refresh, 1000)`

export const memoryPage = (process: string, sample: RuntimeSample): string =>
  page(
    process,
    "memory",
    `<p id="refresh" class="muted">refreshing every second</p>` +
      htmlTable(
        ["figure", "value"],
        memoryRows(sample),
        ([id, label, value]) => [td(label), `<td id="m-${escapeHtml(id)}" class="num">${escapeHtml(value)}</td>`],
        ` id="memory"`,
      ),
    MEMORY_SCRIPT,
  )

/** `NAME=value` lines (already redacted) as a table. */
export const environmentPage = (process: string, lines: ReadonlyArray<string>): string =>
  page(
    process,
    "environment",
    htmlTable(
      ["variable", "value"],
      [...lines].sort(),
      (line) => {
        const at = line.indexOf("=")
        return [
          td(at < 0 ? line : line.slice(0, at)),
          `<td><code>${escapeHtml(at < 0 ? "" : line.slice(at + 1))}</code></td>`,
        ]
      },
      ` id="environment"`,
    ),
  )

export const processPage = (process: string, facts: Readonly<Record<string, unknown>>): string =>
  page(process, "process", keyValueTable(Object.entries(facts), "process"))

export const argumentsPage = (process: string, argv: ReadonlyArray<string>): string =>
  page(
    process,
    "arguments",
    htmlTable(
      ["#", "argument"],
      argv.map((arg, i) => [i, arg] as const),
      ([i, arg]) => [td(i, "num"), `<td><code>${escapeHtml(arg)}</code></td>`],
      ` id="arguments"`,
    ),
  )

export const versionPage = (process: string, build: object): string =>
  page(process, "version", keyValueTable(Object.entries(build), "version"))

/** One metric as prom-client's `getMetricsAsJSON` gives it. */
export interface MetricJson {
  readonly name: string
  readonly help: string
  readonly type: string
  readonly values: ReadonlyArray<{
    readonly value: number
    readonly labels: Readonly<Record<string, string | number>>
    readonly metricName?: string
  }>
}

/** Rows past this are not listed (a search narrows them); histogram buckets add up quickly. */
export const MAX_METRIC_ROWS = 5000

/** Filters rows as the search box is typed in, without a request. */
const METRICS_SCRIPT = `
const search = document.getElementById("search"), rows = document.querySelectorAll("#metrics tbody tr")
const count = document.getElementById("count")
const apply = () => {
  const words = search.value.toLowerCase().split(/\\s+/).filter(Boolean)
  let shown = 0
  for (const row of rows) {
    const text = row.textContent.toLowerCase()
    const visible = words.every((w) => text.includes(w))
    row.hidden = !visible
    if (visible) shown++
  }
  count.textContent = shown + " of " + rows.length + " series shown"
}
search.addEventListener("input", apply)
apply()`

const labelText = (labels: Readonly<Record<string, string | number>>): string =>
  Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(",")

/** The registry's series; `query` (the `?q=` words) filters on the server as the box does in the page. */
export const metricsPage = (process: string, metrics: ReadonlyArray<MetricJson>, query: string): string => {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean)
  const rows = metrics
    .flatMap((m) =>
      m.values.map((v) => ({
        name: v.metricName ?? m.name,
        type: m.type,
        help: m.help,
        labels: labelText(v.labels),
        value: v.value,
      })),
    )
    .filter((r) => words.every((w) => `${r.name} ${r.type} ${r.labels} ${r.help}`.toLowerCase().includes(w)))
  const shown = rows.slice(0, MAX_METRIC_ROWS)
  return page(
    process,
    "metrics",
    `<form method="get"><input id="search" name="q" type="search" placeholder="search names, labels, help" value="${escapeHtml(query)}" autofocus size="40"> ` +
      `<span id="count" class="muted"></span></form>` +
      (rows.length > shown.length
        ? `<p class="muted">${rows.length - shown.length} more series not listed; narrow the search.</p>`
        : "") +
      htmlTable(
        ["metric", "type", "labels", "value"],
        shown,
        (r) => [
          `<td title="${escapeHtml(r.help)}"><code>${escapeHtml(r.name)}</code></td>`,
          td(r.type),
          `<td><code>${escapeHtml(r.labels)}</code></td>`,
          td(r.value, "num"),
        ],
        ` id="metrics"`,
      ),
    METRICS_SCRIPT,
  )
}

/**
 * The reference's signals topic sends the process SIGUSR1. A Node process opens its inspector
 * (a debugger port) on SIGUSR1, so offering it here would hand out a debugger: the page says so
 * instead of sending anything.
 */
export const signalsPage = (process: string): string =>
  page(
    process,
    "signals",
    `<p>No signal is offered. The reference's signals topic sends SIGUSR1; this process runs on Node, which ` +
      `opens its debugger (the inspector) on SIGUSR1, so a button here would hand a debugger to whoever can reach ` +
      `this port. Change log levels on the <a href="/scopez/">scopes</a> page instead.</p>`,
  )

export const notFoundPage = (process: string, path: string): string =>
  page(process, "not found", `<p>No page at <code>${escapeHtml(path)}</code>.</p>`)
