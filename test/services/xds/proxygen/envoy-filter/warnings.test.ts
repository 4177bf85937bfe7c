import { describe, expect, it } from "vitest"
import { loadXdsProtos } from "../../../../../src/layers/xds/protos.js"
import type { ProtoObject } from "../../../../../src/services/xds/cache/resource-spec.js"
import {
  applyEnvoyFilters,
  CLUSTER_TYPE,
  LISTENER_TYPE,
} from "../../../../../src/services/xds/proxygen/envoy-filter/index.js"
import { clusters, envoyFilter, frozen, sidecar, sidecarListeners } from "./fixtures.js"

const messages = (out: { warnings: ReadonlyArray<{ message: string }> }) => out.warnings.map((w) => w.message)

describe("malformed patches", () => {
  it("are skipped with a warning naming the EnvoyFilter and configPatches[i], never a throw", () => {
    const filter = envoyFilter(
      "broken",
      {
        configPatches: [
          { applyTo: "CLUSTER", patch: { operation: "MERGE" } },
          { patch: { operation: "MERGE", value: {} } },
          { applyTo: "CLUSTER", patch: { value: {} } },
          { applyTo: "BOOTSTRAP", patch: { operation: "MERGE", value: {} } },
          { applyTo: "CLUSTER", match: { proxy: { proxyVersion: "(" } }, patch: { operation: "MERGE", value: {} } },
          { applyTo: "ROUTE_CONFIGURATION", patch: { operation: "ADD", value: {} } },
          { applyTo: "CLUSTER", patch: { operation: "MERGE", value: "not an object" } },
          {
            applyTo: "CLUSTER",
            patch: { operation: "MERGE", value: { name: 5, connectTimeout: "soon", altStatName: "ok" } },
          },
        ],
      },
      { namespace: "apps" },
    )
    const out = applyEnvoyFilters([filter], sidecar({ NAMESPACE: "apps" }, "apps"), CLUSTER_TYPE, frozen(clusters()))
    const w = messages(out)
    const at = (i: number) => w.filter((m) => m.startsWith(`EnvoyFilter apps/broken configPatches[${i}]: `))
    expect(at(0)).toEqual([
      "EnvoyFilter apps/broken configPatches[0]: patch.value is missing or not an object; patch ignored",
    ])
    expect(at(1)[0]).toContain("applyTo is missing or INVALID")
    expect(at(2)[0]).toContain("patch.operation is missing or INVALID")
    expect(at(3)[0]).toContain("BOOTSTRAP")
    expect(at(4)[0]).toContain("match.proxy.proxyVersion is not a valid regex")
    expect(at(5)[0]).toContain("operation ADD does not apply to ROUTE_CONFIGURATION")
    expect(at(6)[0]).toContain("patch.value is missing or not an object")
    expect(at(7)).toEqual([
      "EnvoyFilter apps/broken configPatches[7]: patch.value.name: expected a string, got 5",
      'EnvoyFilter apps/broken configPatches[7]: patch.value.connectTimeout: "soon" is not a valid Duration',
    ])
    // the well-formed part of patch 7 still applies to every cluster
    expect(out.resources.every((c) => c.alt_stat_name === "ok")).toBe(true)
    expect(out.resources.map((c) => c.name)).toEqual(clusters().map((c) => c.name))
  })

  it("a field the type does not have is dropped with a warning naming it; valid siblings are kept", () => {
    const filter = envoyFilter("typo", {
      configPatches: [
        {
          applyTo: "NETWORK_FILTER",
          match: {
            listener: { portNumber: 3306, filterChain: { filter: { name: "envoy.filters.network.tcp_proxy" } } },
          },
          patch: {
            operation: "MERGE",
            value: {
              typedConfig: {
                "@type": "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
                idleTimeOut: "5s",
                maxConnectAttempts: 2,
              },
            },
          },
        },
      ],
    })
    const out = applyEnvoyFilters([filter], sidecar(), LISTENER_TYPE, frozen(sidecarListeners()))
    expect(messages(out)).toEqual([
      'EnvoyFilter default/typo configPatches[0]: patch.value.typedConfig.idleTimeOut: no field "idleTimeOut" in envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy; dropped',
    ])
    const mysql = out.resources.find((l) => l.name === "10.0.0.5_3306")!
    const tcp = ((mysql.filter_chains as ReadonlyArray<ProtoObject>)[0]!.filters as ReadonlyArray<ProtoObject>)[0]!
    expect((tcp.typed_config as ProtoObject).max_connect_attempts).toEqual({ value: 2 })
    expect((tcp.typed_config as ProtoObject).idle_timeout).toBeUndefined()
  })

  it("an Any of an unknown type falls back to camelCase → snake_case names, with a warning", () => {
    const filter = envoyFilter("custom", {
      configPatches: [
        {
          applyTo: "CLUSTER",
          patch: {
            operation: "ADD",
            value: {
              name: "custom",
              clusterType: {
                name: "acme.cluster",
                typedConfig: { "@type": "type.googleapis.com/acme.v1.Config", someField: { innerName: 1 } },
              },
            },
          },
        },
      ],
    })
    const out = applyEnvoyFilters([filter], sidecar(), CLUSTER_TYPE, [])
    expect(out.resources).toEqual([
      {
        name: "custom",
        cluster_type: {
          name: "acme.cluster",
          typed_config: { "@type": "type.googleapis.com/acme.v1.Config", some_field: { inner_name: 1 } },
        },
      },
    ])
    expect(messages(out)).toEqual([
      "EnvoyFilter default/custom configPatches[0]: patch.value.clusterType.typedConfig: type type.googleapis.com/acme.v1.Config is not a known proto; its field names are converted without checking",
    ])
  })
})

describe("patched resources", () => {
  it("are deterministic, leave the input untouched and encode with the xDS codec", () => {
    const filters = [
      envoyFilter("ef", {
        configPatches: [
          {
            applyTo: "HTTP_FILTER",
            match: {
              listener: {
                filterChain: {
                  filter: {
                    name: "envoy.filters.network.http_connection_manager",
                    subFilter: { name: "envoy.filters.http.router" },
                  },
                },
              },
            },
            patch: {
              operation: "INSERT_BEFORE",
              value: {
                name: "envoy.filters.http.rbac",
                typedConfig: {
                  "@type": "type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC",
                  rules: { action: "DENY", policies: {} },
                },
              },
            },
          },
          {
            applyTo: "NETWORK_FILTER",
            match: {
              listener: { portNumber: 3306, filterChain: { filter: { name: "envoy.filters.network.tcp_proxy" } } },
            },
            patch: {
              operation: "MERGE",
              value: {
                typedConfig: {
                  "@type": "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
                  idleTimeout: "5s",
                },
              },
            },
          },
        ],
      }),
    ]
    const input = frozen(sidecarListeners())
    const first = applyEnvoyFilters(filters, sidecar(), LISTENER_TYPE, input)
    const second = applyEnvoyFilters(filters, sidecar(), LISTENER_TYPE, input)
    expect(JSON.stringify(first)).toBe(JSON.stringify(second))
    expect(first.warnings).toEqual([])
    const { codec } = loadXdsProtos()
    for (const listener of first.resources) {
      const decoded = codec.decode(LISTENER_TYPE, codec.encode(LISTENER_TYPE, listener))
      expect(decoded.name).toBe(listener.name)
    }
    const mysql = codec.decode(LISTENER_TYPE, codec.encode(LISTENER_TYPE, first.resources[2]!))
    expect(JSON.stringify(mysql)).toContain('"idle_timeout":{"seconds":"5"')
    const http = codec.decode(LISTENER_TYPE, codec.encode(LISTENER_TYPE, first.resources[1]!))
    expect(JSON.stringify(http)).toContain("envoy.extensions.filters.http.rbac.v3.RBAC")
  })
})
