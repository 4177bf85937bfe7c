import { describe, expect, it } from "vitest"
import type { ProtoObject } from "../../../../../src/services/xds/cache/resource-spec.js"
import { applyEnvoyFilters, LISTENER_TYPE } from "../../../../../src/services/xds/proxygen/envoy-filter/index.js"
import { Filter, TypedConfig } from "../../../../../src/services/xds/proxygen/well-known.js"
import { envoyFilter, frozen, names, router, sidecar, sidecarListeners } from "./fixtures.js"

const lds = (patches: ReadonlyArray<Record<string, unknown>>, proxy = sidecar(), listeners = sidecarListeners()) =>
  applyEnvoyFilters([envoyFilter("ef", { configPatches: patches })], proxy, LISTENER_TYPE, frozen(listeners))

const byName = (resources: ReadonlyArray<ProtoObject>, name: string): ProtoObject =>
  resources.find((r) => r.name === name) as ProtoObject

const chain = (listener: ProtoObject, i = 0): ProtoObject => (listener.filter_chains as ReadonlyArray<ProtoObject>)[i]!
const filterNames = (fc: ProtoObject) => (fc.filters as ReadonlyArray<ProtoObject>).map((f) => f.name)
const httpFilterNames = (fc: ProtoObject, i = 0) =>
  (
    ((fc.filters as ReadonlyArray<ProtoObject>)[i]!.typed_config as ProtoObject)
      .http_filters as ReadonlyArray<ProtoObject>
  ).map((f) => f.name)

const newListener = {
  name: "extra_9999",
  address: { socketAddress: { address: "0.0.0.0", portValue: 9999 } },
  filterChains: [
    {
      filters: [
        { name: Filter.tcpProxy, typedConfig: { "@type": TypedConfig.tcpProxy, statPrefix: "x", cluster: "x" } },
      ],
    },
  ],
}

describe("LISTENER patches", () => {
  it("ADD appends a listener, converting proto JSON to proto field names (also inside typed_config)", () => {
    const out = lds([
      { applyTo: "LISTENER", match: { context: "SIDECAR_OUTBOUND" }, patch: { operation: "ADD", value: newListener } },
    ])
    expect(out.warnings).toEqual([])
    expect(names(out.resources)).toEqual([
      "virtualOutbound",
      "0.0.0.0_80",
      "10.0.0.5_3306",
      "virtualInbound",
      "extra_9999",
    ])
    expect(byName(out.resources, "extra_9999")).toEqual({
      name: "extra_9999",
      address: { socket_address: { address: "0.0.0.0", port_value: 9999 } },
      filter_chains: [
        {
          filters: [
            { name: Filter.tcpProxy, typed_config: { "@type": TypedConfig.tcpProxy, stat_prefix: "x", cluster: "x" } },
          ],
        },
      ],
    })
  })

  it("ADD without a context adds for sidecars (outbound) and gateways; SIDECAR_INBOUND never adds", () => {
    const any = { applyTo: "LISTENER", patch: { operation: "ADD", value: newListener } }
    expect(names(lds([any]).resources)).toContain("extra_9999")
    expect(names(lds([any], router(), []).resources)).toEqual(["extra_9999"])
    const inbound = { ...any, match: { context: "SIDECAR_INBOUND" } }
    expect(names(lds([inbound]).resources)).not.toContain("extra_9999")
    const gateway = { ...any, match: { context: "GATEWAY" } }
    expect(names(lds([gateway]).resources)).not.toContain("extra_9999")
    expect(names(lds([gateway], router(), []).resources)).toEqual(["extra_9999"])
  })

  it("ADD of a name that exists is skipped with a warning", () => {
    const out = lds([
      { applyTo: "LISTENER", patch: { operation: "ADD", value: { ...newListener, name: "0.0.0.0_80" } } },
    ])
    expect(out.resources).toHaveLength(4)
    expect(out.warnings.map((w) => w.message)).toEqual([
      'EnvoyFilter default/ef configPatches[0]: listener "0.0.0.0_80" already exists; ADD skipped',
    ])
  })

  it("REMOVE by port and MERGE by name; REPLACE swaps the listener", () => {
    const out = lds([
      { applyTo: "LISTENER", match: { listener: { portNumber: 3306 } }, patch: { operation: "REMOVE" } },
      {
        applyTo: "LISTENER",
        match: { listener: { name: "0.0.0.0_80" } },
        patch: {
          operation: "MERGE",
          value: { perConnectionBufferLimitBytes: 1024, listenerFilters: [{ name: "x.filter" }] },
        },
      },
      {
        applyTo: "LISTENER",
        match: { listener: { name: "virtualOutbound" } },
        patch: { operation: "REPLACE", value: newListener },
      },
    ])
    expect(names(out.resources)).toEqual(["extra_9999", "0.0.0.0_80", "virtualInbound"])
    const http = byName(out.resources, "0.0.0.0_80")
    expect(http.per_connection_buffer_limit_bytes).toEqual({ value: 1024 })
    // repeated fields append, as proto merge does
    expect((http.listener_filters as ReadonlyArray<ProtoObject>).map((f) => f.name)).toEqual([
      Filter.httpInspector,
      "x.filter",
    ])
  })

  it("context: SIDECAR_INBOUND patches only the inbound listener, GATEWAY only gateways", () => {
    const merge = (context: string) => ({
      applyTo: "LISTENER",
      match: { context },
      patch: { operation: "MERGE", value: { statPrefix: "patched" } },
    })
    const inbound = lds([merge("SIDECAR_INBOUND")])
    expect(inbound.resources.filter((l) => l.stat_prefix === "patched").map((l) => l.name)).toEqual(["virtualInbound"])
    const outbound = lds([merge("SIDECAR_OUTBOUND")])
    expect(outbound.resources.filter((l) => l.stat_prefix === "patched")).toHaveLength(3)
    expect(lds([merge("GATEWAY")]).resources.filter((l) => l.stat_prefix === "patched")).toHaveLength(0)
    const gw = lds([merge("GATEWAY")], router(), [{ name: "0.0.0.0_8080" }])
    expect(gw.resources).toEqual([{ name: "0.0.0.0_8080", stat_prefix: "patched" }])
  })
})

describe("LISTENER_FILTER patches", () => {
  it("INSERT_BEFORE a named listener filter and REMOVE it", () => {
    const out = lds([
      {
        applyTo: "LISTENER_FILTER",
        match: { listener: { portNumber: 80, listenerFilter: Filter.httpInspector } },
        patch: {
          operation: "INSERT_BEFORE",
          value: { name: Filter.tlsInspector, typedConfig: { "@type": TypedConfig.tlsInspector } },
        },
      },
      {
        applyTo: "LISTENER_FILTER",
        match: { listener: { portNumber: 80, listenerFilter: Filter.httpInspector } },
        patch: { operation: "REMOVE" },
      },
    ])
    expect(byName(out.resources, "0.0.0.0_80").listener_filters).toEqual([
      { name: Filter.tlsInspector, typed_config: { "@type": TypedConfig.tlsInspector } },
    ])
  })
})

describe("FILTER_CHAIN patches", () => {
  it("MERGE into the chains a match selects (typed transport socket merged field by field)", () => {
    const listeners = sidecarListeners().map((l) =>
      l.name === "0.0.0.0_80"
        ? {
            ...l,
            filter_chains: [
              {
                ...chain(l),
                transport_socket: {
                  name: "envoy.transport_sockets.tls",
                  typed_config: { "@type": TypedConfig.downstreamTls, require_client_certificate: { value: true } },
                },
              },
            ],
          }
        : l,
    )
    const out = lds(
      [
        {
          applyTo: "FILTER_CHAIN",
          match: { listener: { portNumber: 80, filterChain: { applicationProtocols: "h2c" } } },
          patch: {
            operation: "MERGE",
            value: {
              transportSocket: {
                name: "envoy.transport_sockets.tls",
                typedConfig: { "@type": TypedConfig.downstreamTls, commonTlsContext: { alpnProtocols: ["h2"] } },
              },
            },
          },
        },
      ],
      sidecar(),
      listeners,
    )
    expect(out.warnings).toEqual([])
    expect(chain(byName(out.resources, "0.0.0.0_80")).transport_socket).toEqual({
      name: "envoy.transport_sockets.tls",
      typed_config: {
        "@type": TypedConfig.downstreamTls,
        require_client_certificate: { value: true },
        common_tls_context: { alpn_protocols: ["h2"] },
      },
    })
  })

  it("on virtualInbound the port number selects the chain by destination port; sni and transport protocol", () => {
    const merge = (listener: Record<string, unknown>) => ({
      applyTo: "FILTER_CHAIN",
      match: { context: "SIDECAR_INBOUND", listener },
      patch: { operation: "MERGE", value: { transportSocketConnectTimeout: "5s" } },
    })
    const hits = (out: { resources: ReadonlyArray<ProtoObject> }) =>
      (byName(out.resources, "virtualInbound").filter_chains as ReadonlyArray<ProtoObject>)
        .filter((fc) => fc.transport_socket_connect_timeout !== undefined)
        .map((fc) => fc.name)
    expect(hits(lds([merge({ portNumber: 5432 })]))).toEqual(["0.0.0.0_5432"])
    expect(hits(lds([merge({ filterChain: { sni: "reviews", transportProtocol: "tls" } })]))).toEqual(["0.0.0.0_9080"])
    expect(hits(lds([merge({ filterChain: { destinationPort: 9080 } })]))).toEqual(["0.0.0.0_9080"])
    expect(hits(lds([merge({ filterChain: { name: "0.0.0.0_5432" } })]))).toEqual(["0.0.0.0_5432"])
    expect(hits(lds([merge({ filterChain: { sni: "other" } })]))).toEqual([])
  })

  it("ADD appends a chain, REMOVE drops the matched one", () => {
    const out = lds([
      {
        applyTo: "FILTER_CHAIN",
        match: { listener: { name: "virtualInbound", filterChain: { destinationPort: 5432 } } },
        patch: { operation: "REMOVE" },
      },
      {
        applyTo: "FILTER_CHAIN",
        match: { listener: { name: "virtualInbound" } },
        patch: { operation: "ADD", value: { name: "added", filterChainMatch: { destinationPort: 7000 }, filters: [] } },
      },
    ])
    const chains = byName(out.resources, "virtualInbound").filter_chains as ReadonlyArray<ProtoObject>
    expect(chains.map((fc) => fc.name)).toEqual(["0.0.0.0_9080", "added"])
    expect(chains[1]!.filter_chain_match).toEqual({ destination_port: { value: 7000 } })
  })
})

describe("NETWORK_FILTER patches", () => {
  const onMysql = (filter?: string) => ({
    listener: { portNumber: 3306, filterChain: filter === undefined ? {} : { filter: { name: filter } } },
  })
  const value = (name: string) => ({ name, typedConfig: { "@type": TypedConfig.networkRbac, statPrefix: name } })
  const mysqlFilters = (patches: ReadonlyArray<Record<string, unknown>>) =>
    filterNames(chain(byName(lds(patches).resources, "10.0.0.5_3306")))

  it("INSERT_BEFORE / INSERT_AFTER a named filter, INSERT_FIRST", () => {
    expect(
      mysqlFilters([
        {
          applyTo: "NETWORK_FILTER",
          match: onMysql(Filter.tcpProxy),
          patch: { operation: "INSERT_BEFORE", value: value("before") },
        },
        {
          applyTo: "NETWORK_FILTER",
          match: onMysql(Filter.tcpProxy),
          patch: { operation: "INSERT_AFTER", value: value("after") },
        },
        { applyTo: "NETWORK_FILTER", match: onMysql(), patch: { operation: "INSERT_FIRST", value: value("first") } },
      ]),
    ).toEqual(["first", "before", Filter.tcpProxy, "after"])
  })

  it("INSERT_BEFORE a filter that is not there inserts nothing; without a filter match it goes first", () => {
    expect(
      mysqlFilters([
        {
          applyTo: "NETWORK_FILTER",
          match: onMysql("missing"),
          patch: { operation: "INSERT_BEFORE", value: value("x") },
        },
        { applyTo: "NETWORK_FILTER", match: onMysql(), patch: { operation: "INSERT_BEFORE", value: value("y") } },
        { applyTo: "NETWORK_FILTER", match: onMysql(), patch: { operation: "INSERT_AFTER", value: value("z") } },
      ]),
    ).toEqual(["y", Filter.tcpProxy, "z"])
  })

  it("REMOVE and REPLACE a named filter", () => {
    expect(
      mysqlFilters([{ applyTo: "NETWORK_FILTER", match: onMysql(Filter.tcpProxy), patch: { operation: "REMOVE" } }]),
    ).toEqual([])
    const out = lds([
      {
        applyTo: "NETWORK_FILTER",
        match: onMysql(Filter.tcpProxy),
        patch: { operation: "REPLACE", value: value("rbac") },
      },
    ])
    expect(chain(byName(out.resources, "10.0.0.5_3306")).filters).toEqual([
      { name: "rbac", typed_config: { "@type": TypedConfig.networkRbac, stat_prefix: "rbac" } },
    ])
  })

  it("MERGE merges the typed config of the same type and may rename the filter", () => {
    const out = lds([
      {
        applyTo: "NETWORK_FILTER",
        match: onMysql(Filter.tcpProxy),
        patch: {
          operation: "MERGE",
          value: { typedConfig: { "@type": TypedConfig.tcpProxy, idleTimeout: "30s", maxConnectAttempts: 3 } },
        },
      },
    ])
    expect(chain(byName(out.resources, "10.0.0.5_3306")).filters).toEqual([
      {
        name: Filter.tcpProxy,
        typed_config: {
          "@type": TypedConfig.tcpProxy,
          stat_prefix: "outbound|3306||mysql.db.svc.cluster.local",
          cluster: "outbound|3306||mysql.db.svc.cluster.local",
          idle_timeout: { seconds: "30", nanos: 0 },
          max_connect_attempts: { value: 3 },
        },
      },
    ])
  })
})

describe("HTTP_FILTER patches", () => {
  const luaType = "type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua"
  const onHttp = (subFilter?: string) => ({
    listener: {
      portNumber: 80,
      filterChain: {
        filter: {
          name: Filter.httpConnectionManager,
          ...(subFilter === undefined ? {} : { subFilter: { name: subFilter } }),
        },
      },
    },
  })

  it("INSERT_BEFORE the router, with the value's typed config converted to proto field names", () => {
    const out = lds([
      {
        applyTo: "HTTP_FILTER",
        match: { context: "SIDECAR_OUTBOUND", ...onHttp(Filter.router) },
        patch: {
          operation: "INSERT_BEFORE",
          value: {
            name: "envoy.filters.http.lua",
            typedConfig: { "@type": luaType, defaultSourceCode: { inlineString: "function envoy_on_request(h) end" } },
          },
        },
      },
    ])
    expect(out.warnings).toEqual([])
    const fc = chain(byName(out.resources, "0.0.0.0_80"))
    expect(httpFilterNames(fc)).toEqual([Filter.fault, "envoy.filters.http.lua", Filter.router])
    const lua = ((fc.filters as ReadonlyArray<ProtoObject>)[0]!.typed_config as ProtoObject)
      .http_filters as ReadonlyArray<ProtoObject>
    expect(lua[1]).toEqual({
      name: "envoy.filters.http.lua",
      typed_config: { "@type": luaType, default_source_code: { inline_string: "function envoy_on_request(h) end" } },
    })
    // the inbound HCM is untouched (context)
    expect(httpFilterNames(chain(byName(out.resources, "virtualInbound")))).toEqual([Filter.fault, Filter.router])
  })

  it("INSERT_AFTER, INSERT_FIRST, REMOVE, REPLACE and MERGE of HTTP filters", () => {
    const out = lds([
      {
        applyTo: "HTTP_FILTER",
        match: onHttp(Filter.fault),
        patch: { operation: "INSERT_AFTER", value: { name: "after-fault" } },
      },
      { applyTo: "HTTP_FILTER", match: onHttp(), patch: { operation: "INSERT_FIRST", value: { name: "first" } } },
      {
        applyTo: "HTTP_FILTER",
        match: onHttp("after-fault"),
        patch: { operation: "REPLACE", value: { name: "replaced" } },
      },
      { applyTo: "HTTP_FILTER", match: onHttp("first"), patch: { operation: "REMOVE" } },
      {
        applyTo: "HTTP_FILTER",
        match: onHttp(Filter.fault),
        patch: { operation: "MERGE", value: { typedConfig: { "@type": TypedConfig.fault, maxActiveFaults: 5 } } },
      },
    ])
    const fc = chain(byName(out.resources, "0.0.0.0_80"))
    expect(httpFilterNames(fc)).toEqual([Filter.fault, "replaced", Filter.router])
    const filters = ((fc.filters as ReadonlyArray<ProtoObject>)[0]!.typed_config as ProtoObject)
      .http_filters as ReadonlyArray<ProtoObject>
    expect(filters[0]).toEqual({
      name: Filter.fault,
      typed_config: { "@type": TypedConfig.fault, max_active_faults: { value: 5 } },
    })
  })
})

describe("route patches inside an inbound HTTP connection manager", () => {
  it("apply with the inbound context to the inline route configuration", () => {
    const out = lds([
      {
        applyTo: "HTTP_ROUTE",
        match: {
          context: "SIDECAR_INBOUND",
          routeConfiguration: { portNumber: 9080, vhost: { route: { name: "default" } } },
        },
        patch: { operation: "MERGE", value: { route: { timeout: "3s" } } },
      },
    ])
    const inbound = chain(byName(out.resources, "virtualInbound"))
    const config = (inbound.filters as ReadonlyArray<ProtoObject>)[0]!.typed_config as ProtoObject
    const route = ((config.route_config as ProtoObject).virtual_hosts as ReadonlyArray<ProtoObject>)[0]!
      .routes as ReadonlyArray<ProtoObject>
    expect(route[0]!.route).toEqual({ cluster: "inbound|9080||", timeout: { seconds: "3", nanos: 0 } })
  })
})
