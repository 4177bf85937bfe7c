import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { parseConfigDump } from "../../../src/services/proxy-config/dump.js"
import { allMatch, compareDumps, comparisonReport } from "../../../src/services/proxy-config/sync-diff.js"

const ADMIN = "type.googleapis.com/envoy.admin.v3."

const dump = (options: {
  clusters: ReadonlyArray<Record<string, unknown>>
  listeners?: ReadonlyArray<Record<string, unknown>>
  routes?: ReadonlyArray<Record<string, unknown>>
  updated?: string
  version?: string
}) => {
  const updated = options.updated ?? "2026-11-26T20:00:00.000Z"
  const version = options.version ?? "v1"
  const text = JSON.stringify({
    configs: [
      {
        "@type": `${ADMIN}ClustersConfigDump`,
        static_clusters: [{ cluster: { name: "prometheus_stats" } }],
        dynamic_active_clusters: options.clusters.map((cluster) => ({
          version_info: version,
          cluster: { "@type": "type.googleapis.com/envoy.config.cluster.v3.Cluster", ...cluster },
          last_updated: updated,
        })),
      },
      {
        "@type": `${ADMIN}ListenersConfigDump`,
        dynamic_listeners: (options.listeners ?? []).map((listener) => ({
          name: listener.name,
          active_state: { version_info: version, listener, last_updated: updated },
        })),
      },
      {
        "@type": `${ADMIN}RoutesConfigDump`,
        dynamic_route_configs: (options.routes ?? []).map((route_config) => ({
          version_info: version,
          route_config,
          last_updated: updated,
        })),
      },
    ],
  })
  return Either.getOrThrow(parseConfigDump(text))
}

const reviews = { name: "outbound|9080||reviews", type: "EDS", connect_timeout: "10s" }
const ratings = { name: "outbound|9080||ratings", type: "EDS", connect_timeout: "10s" }

describe("compareDumps", () => {
  it("matches when the dynamic resources agree, whatever the order, key order and bookkeeping", () => {
    const sent = dump({ clusters: [reviews, ratings], routes: [{ name: "9080" }], version: "a" })
    const held = dump({
      clusters: [{ connect_timeout: "10s", type: "EDS", name: ratings.name }, reviews],
      routes: [{ name: "9080" }],
      version: "b",
      updated: "2026-11-26T21:30:05.000Z",
    })
    const result = compareDumps(sent, held)
    expect(allMatch(result)).toBe(true)
    expect(comparisonReport(result)).toBe(
      "Clusters Match\nListeners Match\nRoutes Match (RDS last loaded at Thu, 26 Nov 2026 21:30:05 UTC)",
    )
  })

  it("reports a differing type with a unified diff of the control plane's against the proxy's", () => {
    const sent = dump({ clusters: [reviews], listeners: [{ name: "0.0.0.0_9080", port: 9080 }] })
    const held = dump({ clusters: [reviews], listeners: [{ name: "0.0.0.0_9080", port: 9081 }] })
    const report = comparisonReport(compareDumps(sent, held))
    const [clusters, listeners, ...diff] = report.split("\n")
    expect(clusters).toBe("Clusters Match")
    expect(listeners).toBe("Listeners Don't Match")
    expect(diff.slice(0, 2)).toEqual(["--- Meshd Listeners", "+++ Proxy Listeners"])
    expect(diff).toContain('-    "port": 9080')
    expect(diff).toContain('+    "port": 9081')
    expect(diff.at(-1)).toBe("Routes Match (RDS last loaded at <none>)")
  })

  it("shows a cluster the proxy lacks as removed lines", () => {
    const report = comparisonReport(compareDumps(dump({ clusters: [reviews, ratings] }), dump({ clusters: [reviews] })))
    expect(report).toMatch(/^Clusters Don't Match\n--- Meshd Clusters\n\+\+\+ Proxy Clusters\n@@ /)
    expect(report).toContain(`-    "name": "${ratings.name}",`)
    expect(report).not.toContain("prometheus_stats")
  })
})
