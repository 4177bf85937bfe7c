import { describe, expect, it } from "vitest"
import type { ProtoObject } from "../../../../../src/services/xds/cache/resource-spec.js"
import {
  applyEnvoyFilters,
  CLUSTER_TYPE,
  EXTENSION_CONFIG_TYPE,
  ROUTE_CONFIGURATION_TYPE,
} from "../../../../../src/services/xds/proxygen/envoy-filter/index.js"
import { clusters, envoyFilter, frozen, names, routeConfiguration, router, sidecar } from "./fixtures.js"

const rds = (
  patches: ReadonlyArray<Record<string, unknown>>,
  configs = [routeConfiguration("80")],
  proxy = sidecar(),
) =>
  applyEnvoyFilters([envoyFilter("ef", { configPatches: patches })], proxy, ROUTE_CONFIGURATION_TYPE, frozen(configs))

const cds = (
  patches: ReadonlyArray<Record<string, unknown>>,
  proxy = sidecar(),
  inboundHosts?: (port: number) => ReadonlyArray<string>,
) =>
  applyEnvoyFilters(
    [envoyFilter("ef", { configPatches: patches })],
    proxy,
    CLUSTER_TYPE,
    frozen(clusters()),
    inboundHosts === undefined ? {} : { inboundHosts },
  )

const vhosts = (rc: ProtoObject) => rc.virtual_hosts as ReadonlyArray<ProtoObject>
const routes = (rc: ProtoObject, i = 0) => vhosts(rc)[i]!.routes as ReadonlyArray<ProtoObject>
const REVIEWS = "reviews.default.svc.cluster.local:80"

describe("ROUTE_CONFIGURATION patches", () => {
  it("MERGE by port: wrappers from bare JSON values, repeated fields appended", () => {
    const out = rds([
      {
        applyTo: "ROUTE_CONFIGURATION",
        match: { routeConfiguration: { portNumber: 80 } },
        patch: {
          operation: "MERGE",
          value: {
            validateClusters: true,
            requestHeadersToAdd: [
              { header: { key: "x-mesh", value: "1" }, appendAction: "OVERWRITE_IF_EXISTS_OR_ADD" },
            ],
          },
        },
      },
      {
        applyTo: "ROUTE_CONFIGURATION",
        match: { routeConfiguration: { portNumber: 8080 } },
        patch: { operation: "MERGE", value: { name: "other" } },
      },
    ])
    expect(out.warnings).toEqual([])
    const rc = out.resources[0]!
    expect(rc.name).toBe("80")
    expect(rc.validate_clusters).toEqual({ value: true })
    expect(rc.request_headers_to_add).toEqual([
      { header: { key: "x-mesh", value: "1" }, append_action: "OVERWRITE_IF_EXISTS_OR_ADD" },
    ])
  })

  it("gateway route names carry port, port name and gateway", () => {
    const merge = (routeConfiguration: Record<string, unknown>) => ({
      applyTo: "ROUTE_CONFIGURATION",
      match: { context: "GATEWAY", routeConfiguration },
      patch: { operation: "MERGE", value: { maxDirectResponseBodySizeBytes: 10 } },
    })
    const configs = [routeConfiguration("http.8080"), routeConfiguration("https.443.https-web.web-gw.mesh-system")]
    const hit = (m: Record<string, unknown>) =>
      names(
        rds([merge(m)], configs, router()).resources.filter(
          (rc) => rc.max_direct_response_body_size_bytes !== undefined,
        ),
      )
    expect(hit({ portNumber: 8080 })).toEqual(["http.8080"])
    expect(hit({ portNumber: 443, portName: "https-web" })).toEqual(["https.443.https-web.web-gw.mesh-system"])
    expect(hit({ gateway: "mesh-system/web-gw" })).toEqual(["https.443.https-web.web-gw.mesh-system"])
    expect(hit({ gateway: "other/web-gw" })).toEqual([])
    // a GATEWAY patch never touches a sidecar's routes
    expect(rds([merge({})]).resources[0]!.max_direct_response_body_size_bytes).toBeUndefined()
  })
})

describe("VIRTUAL_HOST patches", () => {
  it("ADD appends a virtual host, REMOVE drops one by name, MERGE by domain", () => {
    const out = rds([
      {
        applyTo: "VIRTUAL_HOST",
        match: { context: "SIDECAR_OUTBOUND" },
        patch: {
          operation: "ADD",
          value: {
            name: "added",
            domains: ["added.example.com"],
            routes: [{ match: { prefix: "/" }, directResponse: { status: 204 } }],
          },
        },
      },
      {
        applyTo: "VIRTUAL_HOST",
        match: { routeConfiguration: { vhost: { name: "old.example.com:80" } } },
        patch: { operation: "REMOVE" },
      },
      {
        applyTo: "VIRTUAL_HOST",
        match: { routeConfiguration: { vhost: { domainName: "reviews" } } },
        patch: { operation: "MERGE", value: { includeRequestAttemptCount: true } },
      },
    ])
    const rc = out.resources[0]!
    expect(vhosts(rc).map((v) => v.name)).toEqual([REVIEWS, "added"])
    expect(vhosts(rc)[0]!.include_request_attempt_count).toBe(true)
    expect(vhosts(rc)[1]!.routes).toEqual([{ match: { prefix: "/" }, direct_response: { status: 204 } }])
  })
})

describe("HTTP_ROUTE patches", () => {
  it("MERGE a named route: durations converted, a oneof member set clears its siblings", () => {
    const out = rds([
      {
        applyTo: "HTTP_ROUTE",
        match: { routeConfiguration: { vhost: { name: REVIEWS, route: { name: "default" } } } },
        patch: { operation: "MERGE", value: { route: { timeout: "1.5s", retryPolicy: { numRetries: 2 } } } },
      },
      {
        applyTo: "HTTP_ROUTE",
        match: { routeConfiguration: { vhost: { route: { name: "canary", action: "ROUTE" } } } },
        patch: {
          operation: "MERGE",
          value: { route: { cluster: "outbound|80|v2|reviews.default.svc.cluster.local" } },
        },
      },
    ])
    expect(out.warnings).toEqual([])
    const [canary, def] = routes(out.resources[0]!)
    expect(def!.route).toEqual({
      cluster: "outbound|80||reviews.default.svc.cluster.local",
      timeout: { seconds: "1", nanos: 500_000_000 },
      retry_policy: { num_retries: { value: 2 } },
    })
    expect(canary!.route).toEqual({ cluster: "outbound|80|v2|reviews.default.svc.cluster.local" })
  })

  it("route action match, REMOVE, INSERT_FIRST / INSERT_BEFORE / INSERT_AFTER / ADD", () => {
    const value = (name: string) => ({ name, match: { prefix: `/${name}` }, directResponse: { status: 200 } })
    const out = rds([
      {
        applyTo: "HTTP_ROUTE",
        match: { routeConfiguration: { vhost: { route: { action: "REDIRECT" } } } },
        patch: { operation: "REMOVE" },
      },
      {
        applyTo: "HTTP_ROUTE",
        match: { routeConfiguration: { vhost: { name: REVIEWS, route: { name: "default" } } } },
        patch: { operation: "INSERT_BEFORE", value: value("before") },
      },
      {
        applyTo: "HTTP_ROUTE",
        match: { routeConfiguration: { vhost: { name: REVIEWS, route: { name: "canary" } } } },
        patch: { operation: "INSERT_AFTER", value: value("after") },
      },
      {
        applyTo: "HTTP_ROUTE",
        match: { routeConfiguration: { vhost: { name: REVIEWS } } },
        patch: { operation: "INSERT_FIRST", value: value("first") },
      },
      {
        applyTo: "HTTP_ROUTE",
        match: { routeConfiguration: { vhost: { name: REVIEWS } } },
        patch: { operation: "ADD", value: value("last") },
      },
    ])
    const rc = out.resources[0]!
    expect(routes(rc).map((r) => r.name)).toEqual(["first", "canary", "after", "before", "default", "last"])
    expect(routes(rc, 1)).toEqual([])
  })
})

describe("CLUSTER patches", () => {
  it("MERGE by service and port, REMOVE by subset, ADD appended", () => {
    const out = cds([
      {
        applyTo: "CLUSTER",
        match: { cluster: { service: "reviews.default.svc.cluster.local", portNumber: 80 } },
        patch: {
          operation: "MERGE",
          value: { connectTimeout: "2s", circuitBreakers: { thresholds: [{ maxConnections: 10 }] } },
        },
      },
      { applyTo: "CLUSTER", match: { cluster: { subset: "v2" } }, patch: { operation: "REMOVE" } },
      {
        applyTo: "CLUSTER",
        patch: {
          operation: "ADD",
          value: {
            name: "rate-limit",
            type: "STRICT_DNS",
            connectTimeout: "1s",
            loadAssignment: { clusterName: "rate-limit" },
          },
        },
      },
    ])
    expect(out.warnings).toEqual([])
    expect(names(out.resources)).toEqual([
      "outbound|80||reviews.default.svc.cluster.local",
      "outbound|3306||mysql.db.svc.cluster.local",
      "PassthroughCluster",
      "inbound|9080||",
      "rate-limit",
    ])
    // Duration replaced whole (not merged field by field), wrappers from bare values
    expect(out.resources[0]).toEqual({
      name: "outbound|80||reviews.default.svc.cluster.local",
      type: "EDS",
      connect_timeout: { seconds: "2", nanos: 0 },
      circuit_breakers: { thresholds: [{ max_connections: { value: 10 } }] },
    })
    expect(out.resources[4]).toEqual({
      name: "rate-limit",
      type: "STRICT_DNS",
      connect_timeout: { seconds: "1", nanos: 0 },
      load_assignment: { cluster_name: "rate-limit" },
    })
  })

  it("REPLACE by name; the inbound context reaches only inbound clusters; inbound services by port", () => {
    const out = cds(
      [
        {
          applyTo: "CLUSTER",
          match: { cluster: { name: "PassthroughCluster" } },
          patch: { operation: "REPLACE", value: { name: "PassthroughCluster", type: "STATIC" } },
        },
        {
          applyTo: "CLUSTER",
          match: { context: "SIDECAR_INBOUND" },
          patch: { operation: "MERGE", value: { altStatName: "inbound" } },
        },
        {
          applyTo: "CLUSTER",
          match: { context: "SIDECAR_INBOUND", cluster: { service: "reviews.default.svc.cluster.local" } },
          patch: { operation: "MERGE", value: { respectDnsTtl: true } },
        },
      ],
      sidecar(),
      (port) => (port === 9080 ? ["reviews.default.svc.cluster.local"] : []),
    )
    expect(out.resources.find((c) => c.name === "PassthroughCluster")).toEqual({
      name: "PassthroughCluster",
      type: "STATIC",
    })
    expect(out.resources.filter((c) => c.alt_stat_name === "inbound").map((c) => c.name)).toEqual(["inbound|9080||"])
    expect(out.resources.filter((c) => c.respect_dns_ttl === true).map((c) => c.name)).toEqual(["inbound|9080||"])
  })

  it("ADD with the inbound context adds for sidecars; ADD of an existing name is skipped", () => {
    const add = (context: string, name: string) => ({
      applyTo: "CLUSTER",
      match: { context },
      patch: { operation: "ADD", value: { name } },
    })
    const out = cds([add("SIDECAR_INBOUND", "in"), add("GATEWAY", "gw"), add("ANY", "PassthroughCluster")])
    expect(names(out.resources).slice(5)).toEqual(["in"])
    expect(out.warnings.map((w) => w.message)).toEqual([
      'EnvoyFilter default/ef configPatches[2]: cluster "PassthroughCluster" already exists; ADD skipped',
    ])
    expect(names(cds([add("GATEWAY", "gw"), add("SIDECAR_OUTBOUND", "side")], router()).resources).slice(5)).toEqual([
      "gw",
    ])
  })
})

describe("EXTENSION_CONFIG patches", () => {
  it("ADD appends a TypedExtensionConfig to ECDS", () => {
    const out = applyEnvoyFilters(
      [
        envoyFilter("ef", {
          configPatches: [
            {
              applyTo: "EXTENSION_CONFIG",
              patch: {
                operation: "ADD",
                value: {
                  name: "mesh.stats",
                  typedConfig: {
                    "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router",
                    suppressEnvoyHeaders: true,
                  },
                },
              },
            },
          ],
        }),
      ],
      sidecar(),
      EXTENSION_CONFIG_TYPE,
      [],
    )
    expect(out.resources).toEqual([
      {
        name: "mesh.stats",
        typed_config: {
          "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router",
          suppress_envoy_headers: true,
        },
      },
    ])
  })
})
