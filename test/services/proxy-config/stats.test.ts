import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import { renderStats, statsRequest } from "../../../src/services/proxy-config/stats.js"

describe("statsRequest", () => {
  it("picks the admin path per type and output", () => {
    expect(statsRequest("server", "short", 15000)).toEqual(Either.right({ port: 15000, path: "/stats" }))
    expect(statsRequest("server", "json", 15000)).toEqual(Either.right({ port: 15000, path: "/stats?format=json" }))
    expect(statsRequest("server", "yaml", 19000)).toEqual(Either.right({ port: 19000, path: "/stats?format=json" }))
    expect(statsRequest("server", "prom", 15000)).toEqual(Either.right({ port: 15000, path: "/stats/prometheus" }))
    expect(statsRequest("server", "prom-merged", 15000)).toEqual(
      Either.right({ port: 15020, path: "/stats/prometheus" }),
    )
    expect(statsRequest("clusters", "short", 15000)).toEqual(Either.right({ port: 15000, path: "/clusters" }))
    expect(statsRequest("clusters", "json", 15000)).toEqual(
      Either.right({ port: 15000, path: "/clusters?format=json" }),
    )
  })

  it("refuses Prometheus output for cluster stats", () => {
    expect(statsRequest("clusters", "prom", 15000)).toEqual(
      Either.left("--output prom is only available with --type server"),
    )
  })
})

describe("renderStats", () => {
  const body = '{"stats":[{"name":"server.live","value":1}]}'
  it("re-indents JSON and converts it to YAML", () => {
    expect(Either.getOrThrow(renderStats(body, "json"))).toBe(`${JSON.stringify(JSON.parse(body), null, 2)}\n`)
    expect(parse(Either.getOrThrow(renderStats(body, "yaml")))).toEqual(JSON.parse(body))
  })
  it("passes text through and rejects a non-JSON answer to a JSON request", () => {
    expect(renderStats("server.live: 1\n", "short")).toEqual(Either.right("server.live: 1\n"))
    expect(Either.isLeft(renderStats("server.live: 1", "json"))).toBe(true)
  })
})
