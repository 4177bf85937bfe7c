/** The merged metrics page: scrape target parsing, the scrape deadline, and the join of the parts. */
import { Duration, Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  DEFAULT_SCRAPE_TIMEOUT,
  isOpenMetrics,
  mergeMetrics,
  parsePrometheusAnnotations,
  scrapeTimeout,
  TEXT_CONTENT_TYPE,
} from "../../../../src/services/agent/status/metrics-merge.js"

const OM = "application/openmetrics-text; version=1.0.0; charset=utf-8"

describe("parsePrometheusAnnotations", () => {
  it("empty means no application metrics", () => {
    expect(parsePrometheusAnnotations("", 15020)).toEqual(Either.right(undefined))
    expect(parsePrometheusAnnotations("  ", 15020)).toEqual(Either.right(undefined))
  })

  it("reads the annotations' port and path", () => {
    expect(parsePrometheusAnnotations('{"scrape":"true","path":"/custom","port":"9090"}', 15020)).toEqual(
      Either.right({ port: 9090, path: "/custom" }),
    )
    expect(parsePrometheusAnnotations('{"port":9091,"path":"m"}', 15020)).toEqual(
      Either.right({ port: 9091, path: "/m" }),
    )
  })

  it("defaults to port 80 and /metrics", () => {
    expect(parsePrometheusAnnotations('{"scrape":"true"}', 15020)).toEqual(Either.right({ port: 80, path: "/metrics" }))
  })

  it('scrape "false" turns it off', () => {
    expect(parsePrometheusAnnotations('{"scrape":"false","port":"9090"}', 15020)).toEqual(Either.right(undefined))
  })

  it("refuses bad JSON, a non-object, non-string fields and bad ports", () => {
    const left = (text: string) => Either.getLeft(parsePrometheusAnnotations(text, 15020))._tag
    expect(Either.getLeft(parsePrometheusAnnotations("{", 15020)).pipe((o) => o._tag === "Some" && o.value)).toMatch(
      /invalid JSON/,
    )
    expect(left("[]")).toBe("Some")
    expect(left('"x"')).toBe("Some")
    expect(left('{"path":3}')).toBe("Some")
    expect(left('{"port":"http"}')).toBe("Some")
    expect(left('{"port":"70000"}')).toBe("Some")
    expect(left('{"port":"0"}')).toBe("Some")
  })

  it("refuses the agent status port itself (the agent would scrape itself)", () => {
    const result = parsePrometheusAnnotations('{"port":"15020"}', 15020)
    expect(Either.isLeft(result) && result.left).toMatch(/agent status port/)
  })
})

describe("scrapeTimeout", () => {
  it("uses the scraper's X-Prometheus-Scrape-Timeout-Seconds", () => {
    expect(Duration.toMillis(scrapeTimeout("9.5"))).toBe(9500)
    expect(Duration.toMillis(scrapeTimeout("0.25"))).toBe(250)
  })

  it("falls back to the default without a usable header", () => {
    for (const h of [undefined, "", "abc", "0", "-1", "Infinity"])
      expect(scrapeTimeout(h)).toEqual(DEFAULT_SCRAPE_TIMEOUT)
  })
})

describe("mergeMetrics", () => {
  const agent = { source: "agent", text: "# TYPE scrapes_total counter\nscrapes_total 1\n" } as const
  const proxy = { source: "proxy", text: "# TYPE proxy_server_live gauge\nproxy_server_live 1" } as const

  it("text format: the parts in order, each ending in a newline, no # EOF", () => {
    const merged = mergeMetrics([agent, proxy], undefined)
    expect(merged.contentType).toBe(TEXT_CONTENT_TYPE)
    expect(merged.body).toBe(
      "# TYPE scrapes_total counter\nscrapes_total 1\n# TYPE proxy_server_live gauge\nproxy_server_live 1\n",
    )
  })

  it("OpenMetrics from the application: one # EOF, at the very end", () => {
    const app = { source: "application", text: "# TYPE app_requests counter\napp_requests_total 3\n# EOF\n" } as const
    const merged = mergeMetrics([agent, proxy, app], OM)
    expect(merged.contentType).toBe(OM)
    expect(merged.body.match(/^# EOF$/gm)).toHaveLength(1)
    expect(merged.body.endsWith("app_requests_total 3\n# EOF\n")).toBe(true)
  })

  it("strips a # EOF in the middle, whichever part brought it (CRLF too)", () => {
    const eofProxy = { source: "proxy", text: "proxy_server_live 1\r\n# EOF\r\n" } as const
    const app = { source: "application", text: "app_up 1\n" } as const
    const text = mergeMetrics([agent, eofProxy, app], "text/plain; version=0.0.4")
    expect(text.body).not.toMatch(/# EOF/)
    expect(text.body).toContain("app_up 1\n")
    const om = mergeMetrics([agent, eofProxy, app], OM)
    expect(om.body.match(/# EOF/g)).toHaveLength(1)
    expect(om.body.endsWith("app_up 1\n# EOF\n")).toBe(true)
  })

  it("an application that answered text keeps the page in text format", () => {
    const app = { source: "application", text: "app_up 1\n# EOF\n" } as const
    const merged = mergeMetrics([agent, app], "text/plain; version=0.0.4; charset=utf-8")
    expect(merged.contentType).toBe(TEXT_CONTENT_TYPE)
    expect(merged.body).not.toContain("# EOF")
  })

  it("leaves out empty parts and keeps a lone agent page unchanged", () => {
    expect(mergeMetrics([agent, { source: "proxy", text: "" }], undefined).body).toBe(agent.text)
  })

  it("keeps comment lines that only mention EOF", () => {
    const part = { source: "application", text: "# HELP eof_total counts # EOF markers\neof_total 1\n" } as const
    expect(mergeMetrics([part], undefined).body).toBe(part.text)
  })

  it("recognises the OpenMetrics content type", () => {
    expect(isOpenMetrics(OM)).toBe(true)
    expect(isOpenMetrics("Application/OpenMetrics-Text")).toBe(true)
    expect(isOpenMetrics(TEXT_CONTENT_TYPE)).toBe(false)
    expect(isOpenMetrics(undefined)).toBe(false)
  })
})
