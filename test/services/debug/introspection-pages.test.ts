/** The introspection pages escape what they show and bound the metrics listed. */
import { describe, expect, it } from "vitest"
import {
  environmentPage,
  MAX_METRIC_ROWS,
  type MetricJson,
  metricsPage,
  scopesPage,
} from "../../../src/services/debug/introspection-pages.js"

const HOSTILE = `<script>alert(1)</script>`

describe("introspection pages", () => {
  it("escape scope names, environment values and the process name", () => {
    const scopes = scopesPage(HOSTILE, [
      { name: HOSTILE, outputLevel: "info", stackTraceLevel: "none", logCallers: false },
    ])
    const env = environmentPage(HOSTILE, [`EVIL=${HOSTILE}`, `${HOSTILE}=x`])
    for (const page of [scopes, env]) {
      expect(page).not.toContain("<script>alert")
      expect(page).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")
    }
    expect(scopes).toContain(`<option value="info" selected>`)
  })

  it("filter metrics by every word of the query and list at most MAX_METRIC_ROWS series", () => {
    const metrics: ReadonlyArray<MetricJson> = [
      {
        name: "big",
        help: "many series",
        type: "gauge",
        values: Array.from({ length: MAX_METRIC_ROWS + 10 }, (_, i) => ({ labels: { i }, value: i })),
      },
      { name: "pilot_xds_pushes", help: "pushes", type: "counter", values: [{ labels: { type: "cds" }, value: 4 }] },
    ]
    const all = metricsPage("p", metrics, "")
    expect(all).toContain("11 more series not listed")
    const some = metricsPage("p", metrics, "pilot cds")
    expect(some).toContain("pilot_xds_pushes")
    expect(some).not.toContain("more series not listed")
    expect(some.match(/<tr>/g)).toHaveLength(2)
    expect(metricsPage("p", metrics, `"><b>`)).toContain(`value="&quot;&gt;&lt;b&gt;"`)
  })
})
