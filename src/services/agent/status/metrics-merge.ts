/**
 * The merged metrics page of the agent status port (`/stats/prometheus`): the agent's own
 * registry, the proxy's admin `/stats/prometheus` (sidecar mode) and the application's metrics
 * when MESH_PROMETHEUS_ANNOTATIONS names a scrape target — the reference's
 * ISTIO_PROMETHEUS_ANNOTATIONS behaviour. Pure: what to scrape, how long, and how the pieces
 * are joined into one exposition.
 */
import { Duration, Either } from "effect"

/** Prometheus text exposition format 0.0.4 (what prom-client and the proxy write). */
export const TEXT_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

export const isOpenMetrics = (contentType: string | undefined): boolean =>
  (contentType ?? "").toLowerCase().includes("application/openmetrics-text")

/** Where the application's metrics are scraped: `http://127.0.0.1:<port><path>`. */
export interface AppScrapeTarget {
  readonly port: number
  readonly path: string
}

/**
 * MESH_PROMETHEUS_ANNOTATIONS: the pod's `prometheus.io/{scrape,path,port}` annotations as JSON
 * (`{"scrape":"true","path":"/metrics","port":"8080"}`), written by the injector when it moved
 * the scrape to the agent. Empty → no application metrics; `scrape` "false" → none either.
 * Defaults as the reference: path `/metrics`, port 80. A port equal to the agent status port
 * would make the agent scrape itself forever, so it is refused.
 */
export const parsePrometheusAnnotations = (
  text: string,
  agentStatusPort: number,
): Either.Either<AppScrapeTarget | undefined, string> => {
  if (text.trim() === "") return Either.right(undefined)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (e) {
    return Either.left(`invalid JSON: ${(e as Error).message}`)
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return Either.left('expected a JSON object such as {"scrape":"true","path":"/metrics","port":"8080"}')
  }
  const fields = value as Record<string, unknown>
  for (const key of ["scrape", "path", "port"]) {
    const field = fields[key]
    if (field !== undefined && typeof field !== "string" && !(key === "port" && typeof field === "number")) {
      return Either.left(`"${key}" must be a string`)
    }
  }
  if (fields.scrape !== undefined && String(fields.scrape).toLowerCase() === "false") return Either.right(undefined)
  const portText = fields.port === undefined || fields.port === "" ? "80" : String(fields.port)
  if (!/^\d+$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
    return Either.left(`"port" must be a port number 1-65535, got "${portText}"`)
  }
  const port = Number(portText)
  if (port === agentStatusPort) {
    return Either.left(
      `"port" ${port} is the agent status port: the agent would scrape itself; remove the prometheus.io/port=${port} annotation`,
    )
  }
  const rawPath = typeof fields.path === "string" && fields.path !== "" ? fields.path : "/metrics"
  return Either.right({ port, path: rawPath.startsWith("/") ? rawPath : `/${rawPath}` })
}

/** Used when the scraper sends no `X-Prometheus-Scrape-Timeout-Seconds`. */
export const DEFAULT_SCRAPE_TIMEOUT = Duration.seconds(5)

/** The scraper's own deadline (Prometheus sends it as a header) bounds every source's fetch. */
export const scrapeTimeout = (header: string | undefined): Duration.Duration => {
  if (header === undefined) return DEFAULT_SCRAPE_TIMEOUT
  const seconds = Number(header.trim())
  return header.trim() !== "" && Number.isFinite(seconds) && seconds > 0
    ? Duration.millis(Math.round(seconds * 1000))
    : DEFAULT_SCRAPE_TIMEOUT
}

export type ScrapeSource = "agent" | "proxy" | "application"

export interface ScrapedPart {
  readonly source: ScrapeSource
  readonly text: string
}

const EOF_LINE = /^#\s*EOF\s*$/

/**
 * The merged page served for one scrape. OpenMetrics is served only when the application
 * answered in it (it saw the scraper's Accept header); then the page ends with exactly one
 * `# EOF`. Every part's own `# EOF` is removed — one in the middle would end the exposition
 * for the scraper and drop everything after it.
 */
export const mergeMetrics = (
  parts: ReadonlyArray<ScrapedPart>,
  appContentType: string | undefined,
): { readonly body: string; readonly contentType: string } => {
  const openMetrics = isOpenMetrics(appContentType)
  let body = ""
  for (const part of parts) {
    const lines = part.text.split("\n").filter((line) => !EOF_LINE.test(line.replace(/\r$/, "")))
    const text = lines.join("\n")
    if (text.trim() === "") continue
    body += text.endsWith("\n") ? text : `${text}\n`
  }
  if (openMetrics) body += "# EOF\n"
  return { body, contentType: openMetrics ? (appContentType as string) : TEXT_CONTENT_TYPE }
}
