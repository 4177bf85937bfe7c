/**
 * `/debug/ui`: the mesh page. The server embeds the current model (mesh-ui-model.ts) in the
 * page, so the first render needs no second request; the inline script renders it and then
 * polls `/debug/ui/state` (same query: page, search, state filter) and re-renders in place, so
 * the page is live without reloading. Every value reaches the document as text
 * (`textContent`, attribute setters), never as markup; charts are inline SVG built the same way.
 */
import { htmlPage, jsonForScript } from "./html.js"
import type { MeshUiModel } from "./mesh-ui-model.js"

/** How often the page asks for a new state (a NACK shows within this plus one request). */
export const REFRESH_MILLIS = 500

const BODY = `
<p id="live" class="muted">connecting…</p>
<h2>Proxies</h2>
<p id="summary"></p>
<form id="filter" onsubmit="return false">
  <input id="q" type="search" placeholder="search id, type, version, cluster" size="36" aria-label="search proxies">
  <select id="state" aria-label="state filter"><option value="">every state</option><option>NACKED</option>
  <option>STALE</option><option>NOT_SENT</option><option>SYNCED</option></select>
  <button id="prev" type="button">previous</button> <span id="pageinfo"></span> <button id="next" type="button">next</button>
</form>
<table id="proxies"><thead><tr><th>proxy</th><th>type</th><th>version</th><th>cluster</th><th>connected</th>
<th>state</th><th>per type: state, since, reason</th></tr></thead><tbody></tbody></table>
<h2>Refused configuration</h2><p id="refused-count" class="muted"></p>
<table id="refused"><thead><tr><th>file</th><th>document</th><th>resource</th><th>field</th><th>problem</th></tr></thead><tbody></tbody></table>
<h2>Configuration warnings</h2><p id="warnings-count" class="muted"></p>
<table id="warnings"><thead><tr><th>resource</th><th>file</th><th>document</th><th>field</th><th>warning</th></tr></thead><tbody></tbody></table>
<h2>Pushes</h2>
<p id="push-summary"></p>
<div id="charts"></div>
<h2>Certificates</h2>
<table id="certificates"><tbody></tbody></table>
<h2>Orchestrator</h2>
<table id="orchestrator"><tbody></tbody></table>
`

/**
 * Renders a model into the tables and charts above; polls for the next. No template literals,
 * so the script can live in a TypeScript template string as written.
 */
const SCRIPT = `
"use strict"
const REFRESH = ${REFRESH_MILLIS}
const SVG = "http://www.w3.org/2000/svg"
const $ = (id) => document.getElementById(id)
const h = (tag, props, ...children) => {
  const node = document.createElement(tag)
  for (const [k, v] of Object.entries(props || {})) {
    if (k === "className") node.className = v
    else node.setAttribute(k, String(v))
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)))
  return node
}
const s = (tag, attrs, text) => {
  const node = document.createElementNS(SVG, tag)
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v))
  if (text !== undefined) node.textContent = String(text)
  return node
}
const fill = (tbody, rows) => { tbody.replaceChildren(...rows) }
const time = (iso) => iso === "" ? "" : new Date(iso).toLocaleTimeString()
const ago = (iso) => {
  if (iso === "") return ""
  const secs = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000))
  return secs < 120 ? secs + " s ago" : secs < 7200 ? Math.round(secs / 60) + " min ago" : Math.round(secs / 3600) + " h ago"
}
const pushHistory = []

const barChart = (id, title, entries, unit) => {
  if (entries.length === 0) {
    const svg = s("svg", { id, width: 360, height: 40, role: "img", "aria-label": title, "data-total": 0 })
    svg.append(s("text", { x: 4, y: 12, "font-size": 12 }, title), s("text", { x: 4, y: 30, "font-size": 11 }, "no samples yet"))
    return svg
  }
  const width = 360, height = 150, pad = 24, max = Math.max(1, ...entries.map((e) => e[1]))
  const total = entries.reduce((sum, e) => sum + e[1], 0)
  const svg = s("svg", { id, width, height, role: "img", "aria-label": title, "data-total": total,
    "data-values": JSON.stringify(Object.fromEntries(entries)) })
  svg.append(s("title", {}, title), s("text", { x: 4, y: 12, "font-size": 12 }, title))
  const band = (width - 8) / Math.max(1, entries.length)
  entries.forEach(([label, value], i) => {
    const bar = Math.round((value / max) * (height - 2 * pad - 8))
    const x = 4 + i * band
    svg.append(
      s("rect", { x: x + 2, y: height - pad - bar, width: Math.max(2, band - 4), height: bar, fill: "#3b6fb6" }),
      s("text", { x: x + 2, y: height - pad - bar - 2, "font-size": 10 }, value + (unit || "")),
      s("text", { x: x + 2, y: height - 8, "font-size": 10 }, label),
    )
  })
  return svg
}

const lineChart = (id, title, points) => {
  const width = 360, height = 150, pad = 20
  const max = Math.max(1, ...points.map((p) => p[1])), min = Math.min(...points.map((p) => p[1]), max)
  const svg = s("svg", { id, width, height, role: "img", "aria-label": title,
    "data-last": points.length ? points[points.length - 1][1] : 0 })
  svg.append(s("title", {}, title), s("text", { x: 4, y: 12, "font-size": 12 }, title))
  if (points.length > 1) {
    const t0 = points[0][0], t1 = points[points.length - 1][0]
    const xy = points.map(([t, v]) => [4 + ((t - t0) / Math.max(1, t1 - t0)) * (width - 8),
      height - pad - ((v - min) / Math.max(1, max - min)) * (height - 2 * pad - 8)])
    svg.append(s("polyline", { points: xy.map((p) => p[0].toFixed(1) + "," + p[1].toFixed(1)).join(" "),
      fill: "none", stroke: "#b3261e", "stroke-width": 2 }))
  }
  svg.append(s("text", { x: 4, y: height - 4, "font-size": 10 }, "min " + min + ", max " + max + " over " + points.length + " samples"))
  return svg
}

/** Per-bucket counts of a cumulative histogram, labelled "≤ bound". */
const histogramEntries = (histogram) => histogram.buckets.map((b, i) =>
  ["≤" + b.le, b.count - (i > 0 ? histogram.buckets[i - 1].count : 0)])

const renderProxies = (p) => {
  const c = p.counts
  $("summary").textContent = p.total + " connected: " + c.NACKED + " NACKED, " + c.STALE + " STALE, " +
    c.NOT_SENT + " not sent yet, " + c.SYNCED + " SYNCED" + (p.matching !== p.total ? " (" + p.matching + " match)" : "")
  $("pageinfo").textContent = "page " + p.page + " of " + p.pages
  $("prev").disabled = p.page <= 1
  $("next").disabled = p.page >= p.pages
  fill($("proxies").tBodies[0], p.rows.map((r) => h("tr", { "data-proxy": r.nodeId, "data-state": r.state },
    h("td", { title: r.nodeId + " (connection " + r.connectionId + ")" }, r.name || r.nodeId),
    h("td", {}, r.type + (r.delta ? " (delta)" : "")), h("td", {}, r.version), h("td", {}, r.cluster),
    h("td", { title: r.connectedAt }, time(r.connectedAt)),
    h("td", { className: r.state }, r.state),
    h("td", {}, ...r.types.map((t) => h("div", { className: t.state, "data-type": t.type, "data-state": t.state },
      t.type + ": " + t.state + (t.since ? " since " + time(t.since) + " (" + ago(t.since) + ")" : "") +
      (t.reason ? " — " + t.reason : "") + (t.warnings.length ? " — " + t.warnings.join("; ") : "")))))))
}

const renderConfig = (config) => {
  $("refused-count").textContent = config.refusedTotal === 0 ? "No configuration refused." :
    config.refusedTotal + " problem(s)" + (config.refusedTotal > config.refused.length ? ", first " + config.refused.length + " listed" : "")
  fill($("refused").tBodies[0], config.refused.map((i) => h("tr", {},
    h("td", {}, i.file), h("td", {}, i.documentIndex),
    h("td", {}, [i.kind, (i.namespace ? i.namespace + "/" : "") + (i.name || "")].filter(Boolean).join(" ")),
    h("td", {}, h("code", {}, i.path)), h("td", {}, i.message))))
  $("warnings-count").textContent = config.warningsTotal === 0 ? "No warnings." :
    config.warningsTotal + " warning(s)" + (config.warningsTotal > config.warnings.length ? ", first " + config.warnings.length + " listed" : "")
  fill($("warnings").tBodies[0], config.warnings.map((w) => h("tr", {},
    h("td", {}, w.kind + " " + w.namespace + "/" + w.name), h("td", {}, w.file || ""),
    h("td", {}, w.documentIndex === undefined ? "" : w.documentIndex), h("td", {}, h("code", {}, w.path)),
    h("td", {}, w.message))))
}

const renderPush = (push, at) => {
  pushHistory.push([Date.parse(at), push.pushes])
  if (pushHistory.length > 120) pushHistory.shift()
  $("push-summary").textContent = push.pushes + " pushes, config version " + push.pushVersion +
    (push.lastPushStartedAt ? ", last started " + time(push.lastPushStartedAt) : "")
  const types = ["cds", "eds", "lds", "rds", "unknown"].filter((t) => t in push.pushesByType || t !== "unknown")
  $("charts").replaceChildren(
    barChart("chart-pushes", "responses sent per type (pilot_xds_pushes)", types.map((t) => [t, push.pushesByType[t] || 0])),
    lineChart("chart-history", "pushes over time", pushHistory),
    barChart("chart-debounce", "debounce time, s (pilot_debounce_time)", histogramEntries(push.debounce)),
    barChart("chart-pushtime", "push time, s (pilot_xds_push_time)", histogramEntries(push.pushTime)),
    barChart("chart-convergence", "convergence, s (pilot_proxy_convergence_time)", histogramEntries(push.convergence)),
  )
}

const pairs = (tbody, entries) => fill(tbody, entries.map(([k, v]) => h("tr", {}, h("th", {}, k), h("td", {}, v))))

const render = (model) => {
  renderProxies(model.proxies)
  renderConfig(model.config)
  renderPush(model.push, model.generatedAt)
  const cert = model.certificates
  pairs($("certificates").tBodies[0], [["certificates issued", cert.issued], ["signing requests", cert.requests],
    ["signing errors", cert.signErrors], ["root expires", cert.rootExpiry ? new Date(cert.rootExpiry).toString() : "no CA here"],
    ["serving chain expires", cert.chainExpiry ? new Date(cert.chainExpiry).toString() : ""]])
  const o = model.orchestrator
  pairs($("orchestrator").tBodies[0], [
    ["orchestrator", o.server === undefined ? "none (file mode)" : o.server],
    ...(o.server === undefined ? [] : [
      ["API server reachable", o.reachable === undefined ? "not probed yet" : o.reachable ? "yes" : "no: " + o.error],
      ["checked", o.checkedAt ? time(o.checkedAt) : ""]]),
    ["registries synced", o.registriesSynced ? "yes" : "no"], ["configuration synced", o.configSynced ? "yes" : "no"],
    ["leader", o.leader === undefined ? "no leader election" : (o.leader.isLeader ? "this instance" : "another instance") +
      " (" + o.leader.identity + ")"],
    ["server version", model.version]])
  $("live").textContent = "live: updated " + new Date().toLocaleTimeString()
  $("live").className = "muted"
}

const params = new URLSearchParams(location.search)
$("q").value = params.get("q") || ""
$("state").value = params.get("state") || ""
let model = JSON.parse($("initial-state").textContent)
render(model)

let timer
const refresh = async () => {
  clearTimeout(timer)
  // A hidden tab asks nothing (a large mesh's state is not free); it catches up when shown.
  if (document.hidden) { timer = setTimeout(refresh, REFRESH); return }
  try {
    const response = await fetch("/debug/ui/state?" + params.toString(), { cache: "no-store" })
    if (!response.ok) throw new Error(response.status + " " + (await response.text()))
    model = await response.json()
    render(model)
  } catch (error) {
    $("live").textContent = "refresh failed: " + error
    $("live").className = "err"
  }
  timer = setTimeout(refresh, REFRESH)
}
const requery = (changes) => {
  for (const [k, v] of Object.entries(changes)) { if (v === "" || v === 1) params.delete(k); else params.set(k, String(v)) }
  pushHistory.length = 0
  window.history.replaceState(null, "", "?" + params.toString())
  refresh()
}
$("q").addEventListener("input", () => requery({ q: $("q").value, page: 1 }))
$("state").addEventListener("change", () => requery({ state: $("state").value, page: 1 }))
$("prev").addEventListener("click", () => requery({ page: Math.max(1, model.proxies.page - 1) }))
$("next").addEventListener("click", () => requery({ page: model.proxies.page + 1 }))
timer = setTimeout(refresh, REFRESH)
document.addEventListener("visibilitychange", () => { if (!document.hidden) refresh() })
`

export const meshUiPage = (model: MeshUiModel): string =>
  htmlPage({
    title: "mesh — mesh-discovery",
    heading: "mesh-discovery: the mesh",
    nav: [
      { href: "/debug/ui", title: "Mesh" },
      { href: "/debug/syncz", title: "syncz (JSON)" },
      { href: "/debug/config_warnings", title: "config_warnings (JSON)" },
      { href: "/debug/push_status", title: "push_status (JSON)" },
      { href: "/debug/list", title: "every debug page" },
    ],
    body: `<script type="application/json" id="initial-state">${jsonForScript(model)}</script>${BODY}`,
    script: SCRIPT,
  })
