/**
 * `/stats/prometheus` on the agent status port: the agent's registry, the proxy's admin
 * `/stats/prometheus` (sidecar) and the application's scrape target, fetched concurrently
 * within the scraper's deadline and merged (services/agent/status/metrics-merge). A failing
 * source is left out, logged and counted in `scrape_failures_total{type}`; it never fails the page.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Duration, Effect, Option } from "effect"
import {
  type AppScrapeTarget,
  mergeMetrics,
  type ScrapedPart,
  type ScrapeSource,
  scrapeTimeout,
} from "../../../services/agent/status/metrics-merge.js"
import { Metrics } from "../../../services/metrics/metrics.js"

export interface MetricsSources {
  /** The proxy's admin port (sidecar mode); undefined when there is no proxy. */
  readonly proxyAdminPort: number | undefined
  readonly app: AppScrapeTarget | undefined
}

interface Fetched {
  readonly text: string
  readonly contentType: string | undefined
}

const fetchMetrics = (url: string, headers: Record<string, string>) =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(url, { headers, signal })
      const text = await response.text()
      if (response.status !== 200) throw new Error(`HTTP ${response.status} from ${url}`)
      return { text, contentType: response.headers.get("content-type") ?? undefined } satisfies Fetched
    },
    catch: (e) => (e instanceof Error ? e.message : String(e)),
  })

export const mergedMetricsResponse = (sources: MetricsSources) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const metrics = yield* Metrics
    metrics.counter("scrapes_total", "The total number of scrapes.").inc()
    const failures = metrics.counter("scrape_failures_total", "The total number of failed scrapes.", ["type"])
    const timeout = scrapeTimeout(request.headers["x-prometheus-scrape-timeout-seconds"])

    const bounded = (source: ScrapeSource, fetch_: Effect.Effect<Fetched, string>) =>
      fetch_.pipe(
        Effect.timeoutFail({ duration: timeout, onTimeout: () => `no answer within ${Duration.format(timeout)}` }),
        Effect.map(Option.some),
        Effect.catchAll((error) =>
          Effect.sync(() => failures.inc({ type: source })).pipe(
            Effect.zipRight(Effect.logWarning(`failed scraping ${source} metrics: ${error}`)),
            Effect.as(Option.none<Fetched>()),
          ),
        ),
      )

    const agent = bounded(
      "agent",
      Effect.tryPromise({
        try: () => metrics.registry.metrics(),
        catch: (e) => (e instanceof Error ? e.message : String(e)),
      }).pipe(Effect.map((text) => ({ text, contentType: metrics.registry.contentType }))),
    )
    const proxy =
      sources.proxyAdminPort === undefined
        ? Effect.succeed(Option.none<Fetched>())
        : bounded("proxy", fetchMetrics(`http://127.0.0.1:${sources.proxyAdminPort}/stats/prometheus`, {}))
    // The application sees the scraper's Accept header, so it picks the format the scraper wants.
    const accept = request.headers.accept
    const app =
      sources.app === undefined
        ? Effect.succeed(Option.none<Fetched>())
        : bounded(
            "application",
            fetchMetrics(
              `http://127.0.0.1:${sources.app.port}${sources.app.path}`,
              accept !== undefined ? { accept } : {},
            ),
          )

    const [agentPart, proxyPart, appPart] = yield* Effect.all([agent, proxy, app], { concurrency: "unbounded" })
    // Application last, as the reference orders them: its format decides the page's.
    const parts: Array<ScrapedPart> = []
    if (Option.isSome(agentPart)) parts.push({ source: "agent", text: agentPart.value.text })
    if (Option.isSome(proxyPart)) parts.push({ source: "proxy", text: proxyPart.value.text })
    if (Option.isSome(appPart)) parts.push({ source: "application", text: appPart.value.text })
    const merged = mergeMetrics(parts, Option.isSome(appPart) ? appPart.value.contentType : undefined)
    return HttpServerResponse.text(merged.body, { contentType: merged.contentType })
  })
