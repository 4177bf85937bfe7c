/**
 * The HTML the daemons' own pages are made of (the introspection pages and `/debug/ui`): one
 * escaping rule for every value, one layout with inline style, no external asset (a node of a
 * cluster may have no network, and a page must not call out to anyone).
 */

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
}

/** Text for an element's content or a quoted attribute: every markup character escaped. */
export const escapeHtml = (value: unknown): string => String(value).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c)

/**
 * A value for a `<script type="application/json">` block: JSON with `<`, `>`, `&` and the line
 * separators escaped, so no text in it (`</script>`, `<!--`) can end the block or start markup.
 */
export const jsonForScript = (value: unknown): string =>
  JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

export interface NavLink {
  readonly href: string
  readonly title: string
}

export interface PageParts {
  /** The page's title (escaped here). */
  readonly title: string
  /** Markup heading the page, usually the process name (escaped here). */
  readonly heading: string
  readonly nav: ReadonlyArray<NavLink>
  /** The page's body: markup already escaped by its builder. */
  readonly body: string
  /** Inline script run at the end of the body (our own code, never caller text). */
  readonly script?: string
}

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:8px 16px}header h1{font-size:16px;margin:0}
nav{background:#e4e7ec;padding:4px 16px}nav a{margin-right:14px;color:#1d2330}
main{padding:12px 16px}table{border-collapse:collapse;background:#fff;margin:6px 0 14px}
th,td{border:1px solid #d0d4db;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#eef0f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
code,pre{font:12px ui-monospace,monospace}pre{white-space:pre-wrap;word-break:break-all}
.SYNCED{color:#17663a}.STALE{color:#9a6200}.NACKED{color:#b3261e;font-weight:600}.NOT_SENT{color:#666}
.muted{color:#666}.err{color:#b3261e}input,select,button{font:inherit}
`

/** A whole page: doctype, charset, inline style, navigation, body and the optional script. */
export const htmlPage = (parts: PageParts): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
  `<title>${escapeHtml(parts.title)}</title><style>${STYLE}</style></head><body>` +
  `<header><h1>${escapeHtml(parts.heading)}</h1></header>` +
  `<nav>${parts.nav.map((l) => `<a href="${escapeHtml(l.href)}">${escapeHtml(l.title)}</a>`).join("")}</nav>` +
  `<main>${parts.body}</main>` +
  (parts.script === undefined ? "" : `<script>${parts.script}</script>`) +
  `</body></html>`

/** A table of rows already escaped cell by cell by `cell`. */
export const htmlTable = <A>(
  headers: ReadonlyArray<string>,
  rows: ReadonlyArray<A>,
  cells: (row: A) => ReadonlyArray<string>,
  attributes = "",
): string =>
  `<table${attributes}><thead><tr>${headers.map((h) => `<th>${escapeHtml(h)}</th>`).join("")}</tr></thead><tbody>` +
  rows.map((row) => `<tr>${cells(row).join("")}</tr>`).join("") +
  `</tbody></table>`

/** A table cell holding `value` as text. */
export const td = (value: unknown, className?: string): string =>
  `<td${className === undefined ? "" : ` class="${escapeHtml(className)}"`}>${escapeHtml(value)}</td>`

/** Two-column name/value table of an object's own fields. */
export const keyValueTable = (entries: ReadonlyArray<readonly [string, unknown]>, id?: string): string =>
  htmlTable(
    ["name", "value"],
    entries,
    ([name, value]) => [td(name), td(typeof value === "object" && value !== null ? JSON.stringify(value) : value)],
    id === undefined ? "" : ` id="${escapeHtml(id)}"`,
  )
