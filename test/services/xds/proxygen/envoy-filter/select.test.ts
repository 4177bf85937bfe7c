import { describe, expect, it } from "vitest"
import {
  applyEnvoyFilters,
  CLUSTER_TYPE,
  envoyFiltersForProxy,
  envoyFiltersKey,
} from "../../../../../src/services/xds/proxygen/envoy-filter/index.js"
import { clusters, envoyFilter, pushWith, router, sidecar } from "./fixtures.js"

const merge = (value: Record<string, unknown>, match: Record<string, unknown> = {}) => ({
  configPatches: [
    {
      applyTo: "CLUSTER",
      match: { cluster: { name: "PassthroughCluster" }, ...match },
      patch: { operation: "MERGE", value },
    },
  ],
})

const passthrough = (filters: Parameters<typeof applyEnvoyFilters>[0], proxy = sidecar()) =>
  applyEnvoyFilters(filters, proxy, CLUSTER_TYPE, clusters()).resources.find((c) => c.name === "PassthroughCluster")

const names = (filters: ReadonlyArray<{ meta: { namespace: string; name: string } }>) =>
  filters.map((f) => `${f.meta.namespace}/${f.meta.name}`)

describe("envoyFiltersForProxy", () => {
  it("takes the root namespace's and the proxy namespace's filters whose selector matches", () => {
    const push = pushWith([
      envoyFilter("global", {}, { namespace: "mesh-system" }),
      envoyFilter("own", {}),
      envoyFilter("other-ns", {}, { namespace: "other" }),
      envoyFilter("selected", { workloadSelector: { labels: { app: "reviews" } } }),
      envoyFilter("not-selected", { workloadSelector: { labels: { app: "ratings" } } }),
      envoyFilter("global-selected", { workloadSelector: { labels: { version: "v1" } } }, { namespace: "mesh-system" }),
    ])
    expect(names(envoyFiltersForProxy(push, sidecar()))).toEqual([
      "mesh-system/global",
      "mesh-system/global-selected",
      "default/own",
      "default/selected",
    ])
    expect(names(envoyFiltersForProxy(push, sidecar({}, "other")))).toEqual([
      "mesh-system/global",
      "mesh-system/global-selected",
      "other/other-ns",
    ])
  })

  it("orders by priority, then the root namespace, then age, then name", () => {
    const push = pushWith([
      envoyFilter("b-late", {}, { created: "2024-03-01T00:00:00Z" }),
      envoyFilter("a-early", {}, { created: "2024-02-01T00:00:00Z" }),
      envoyFilter("same-time-b", { priority: 5 }, { created: "2024-01-01T00:00:00Z" }),
      envoyFilter("same-time-a", { priority: 5 }, { created: "2024-01-01T00:00:00Z" }),
      envoyFilter("root-late", {}, { namespace: "mesh-system", created: "2025-01-01T00:00:00Z" }),
      envoyFilter("first", { priority: -10 }, { created: "2025-06-01T00:00:00Z" }),
    ])
    expect(names(envoyFiltersForProxy(push, sidecar()))).toEqual([
      "default/first",
      "mesh-system/root-late",
      "default/a-early",
      "default/b-late",
      "default/same-time-a",
      "default/same-time-b",
    ])
  })

  it("later patches win: a higher priority's MERGE overrides a lower one's", () => {
    const push = pushWith([
      envoyFilter("high", { priority: 10, ...merge({ altStatName: "high" }) }, { created: "2024-01-01T00:00:00Z" }),
      envoyFilter("low", merge({ altStatName: "low" }), { created: "2024-06-01T00:00:00Z" }),
    ])
    expect(passthrough(envoyFiltersForProxy(push, sidecar()))?.alt_stat_name).toBe("high")
  })

  it("targetRefs name a gateway-API gateway by its deployment label", () => {
    const push = pushWith([
      envoyFilter(
        "to-gw",
        { targetRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "web" }] },
        { namespace: "apps" },
      ),
    ])
    expect(
      envoyFiltersForProxy(push, router({ "gateway.networking.k8s.io/gateway-name": "web" }, "apps")),
    ).toHaveLength(1)
    expect(
      envoyFiltersForProxy(push, router({ "gateway.networking.k8s.io/gateway-name": "api" }, "apps")),
    ).toHaveLength(0)
    expect(envoyFiltersForProxy(push, sidecar({}, "apps"))).toHaveLength(0)
  })
})

describe("match.proxy", () => {
  it("proxyVersion is a regex on the proxy's version; metadata values must be equal", () => {
    const f = (match: Record<string, unknown>) => [envoyFilter("ef", merge({ altStatName: "hit" }, match))]
    expect(passthrough(f({ proxy: { proxyVersion: "^1\\.20.*" } }))?.alt_stat_name).toBe("hit")
    expect(passthrough(f({ proxy: { proxyVersion: "^1\\.19.*" } }))?.alt_stat_name).toBeUndefined()
    expect(
      passthrough(f({ proxy: { proxyVersion: ".*" } }), sidecar({ MESH_VERSION: "" }))?.alt_stat_name,
    ).toBeUndefined()
    expect(
      passthrough(f({ proxy: { metadata: { CLUSTER_ID: "east" } } }), sidecar({ CLUSTER_ID: "east" }))?.alt_stat_name,
    ).toBe("hit")
    expect(
      passthrough(f({ proxy: { metadata: { CLUSTER_ID: "east" } } }), sidecar({ CLUSTER_ID: "west" }))?.alt_stat_name,
    ).toBeUndefined()
  })
})

describe("envoyFiltersKey", () => {
  it("is empty without filters, stable, and changes with any filter or with what patches read of the proxy", () => {
    const a = envoyFilter("a", merge({ altStatName: "a" }))
    const b = envoyFilter("b", merge({ altStatName: "b" }, { proxy: { proxyVersion: "^1\\." } }))
    expect(envoyFiltersKey([])).toBe("")
    expect(envoyFiltersKey([a])).toBe(envoyFiltersKey([a]))
    expect(envoyFiltersKey([a])).not.toBe(envoyFiltersKey([a, b]))
    expect(envoyFiltersKey([a, b])).not.toBe(envoyFiltersKey([b, a]))
    expect(envoyFiltersKey([a], sidecar({ MESH_VERSION: "1.1" }))).toBe(
      envoyFiltersKey([a], sidecar({ MESH_VERSION: "1.2" })),
    )
    expect(envoyFiltersKey([b], sidecar({ MESH_VERSION: "1.1" }))).not.toBe(
      envoyFiltersKey([b], sidecar({ MESH_VERSION: "1.2" })),
    )
  })
})
