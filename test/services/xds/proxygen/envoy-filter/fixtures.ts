/** Plain fixtures for the EnvoyFilter tests: proxies, EnvoyFilter resources, generated resources. */
import type { ConfigResource } from "../../../../../src/services/config-model/resource.js"
import type { EnvoyFilterSpec } from "../../../../../src/services/config-model/schemas/envoy-filter.js"
import type { ProtoObject } from "../../../../../src/services/xds/cache/resource-spec.js"
import {
  emptyProxyConfigInput,
  emptyPushContextInput,
  makePushContext,
  type PushContext,
} from "../../../../../src/services/xds/model/push-context.js"
import { type ProxyView, proxyView } from "../../../../../src/services/xds/proxygen/proxy-view.js"
import { Filter, TypedConfig } from "../../../../../src/services/xds/proxygen/well-known.js"

export const sidecar = (metadata: Record<string, unknown> = {}, namespace = "default"): ProxyView =>
  proxyView(`sidecar~10.0.0.1~app-1.${namespace}~${namespace}.svc.cluster.local`, {
    NAMESPACE: namespace,
    LABELS: { app: "reviews", version: "v1" },
    MESH_VERSION: "1.20.3",
    ...metadata,
  })!

export const router = (labels: Record<string, string> = { app: "ingress" }, namespace = "mesh-system"): ProxyView =>
  proxyView(`router~10.0.0.9~gw-1.${namespace}~${namespace}.svc.cluster.local`, {
    NAMESPACE: namespace,
    LABELS: labels,
    MESH_VERSION: "1.20.3",
  })!

let counter = 0

/** An EnvoyFilter resource; the spec is loosely typed so tests can hand malformed patches over. */
export const envoyFilter = (
  name: string,
  spec: Record<string, unknown>,
  options: { namespace?: string; created?: string } = {},
): ConfigResource<EnvoyFilterSpec> => {
  counter += 1
  return {
    group: "networking.mesh.io",
    version: "v1alpha3",
    kind: "EnvoyFilter",
    meta: {
      name,
      namespace: options.namespace ?? "default",
      labels: {},
      annotations: {},
      creationTimestamp: options.created ?? new Date(Date.UTC(2024, 0, 1, 0, 0, counter)).toISOString(),
    },
    spec: spec as EnvoyFilterSpec,
  }
}

export const pushWith = (filters: ReadonlyArray<ConfigResource<EnvoyFilterSpec>>): PushContext =>
  makePushContext({ ...emptyPushContextInput, proxyConfig: { ...emptyProxyConfigInput, envoyFilters: filters } })

const address = (ip: string, port: number) => ({ socket_address: { address: ip, port_value: port } })

export const hcm = (routeName: string, extra: ProtoObject = {}): ProtoObject => ({
  name: Filter.httpConnectionManager,
  typed_config: {
    "@type": TypedConfig.httpConnectionManager,
    stat_prefix: routeName,
    ...("route_config" in extra
      ? {}
      : { rds: { route_config_name: routeName, config_source: { ads: {}, resource_api_version: "V3" } } }),
    http_filters: [
      { name: Filter.fault, typed_config: { "@type": TypedConfig.fault } },
      { name: Filter.router, typed_config: { "@type": TypedConfig.router } },
    ],
    ...extra,
  },
})

export const tcpProxy = (cluster: string): ProtoObject => ({
  name: Filter.tcpProxy,
  typed_config: { "@type": TypedConfig.tcpProxy, stat_prefix: cluster, cluster },
})

/** A sidecar's listeners: virtualOutbound, an HTTP one on 80, a TCP one on 3306, virtualInbound. */
export const sidecarListeners = (): ReadonlyArray<ProtoObject> => [
  {
    name: "virtualOutbound",
    address: address("0.0.0.0", 15001),
    traffic_direction: "OUTBOUND",
    filter_chains: [{ name: "virtualOutbound-catchall-tcp", filters: [tcpProxy("PassthroughCluster")] }],
  },
  {
    name: "0.0.0.0_80",
    address: address("0.0.0.0", 80),
    traffic_direction: "OUTBOUND",
    listener_filters: [{ name: Filter.httpInspector, typed_config: { "@type": TypedConfig.httpInspector } }],
    filter_chains: [{ filter_chain_match: { application_protocols: ["http/1.1", "h2c"] }, filters: [hcm("80")] }],
  },
  {
    name: "10.0.0.5_3306",
    address: address("10.0.0.5", 3306),
    traffic_direction: "OUTBOUND",
    filter_chains: [{ filters: [tcpProxy("outbound|3306||mysql.db.svc.cluster.local")] }],
  },
  {
    name: "virtualInbound",
    address: address("0.0.0.0", 15006),
    traffic_direction: "INBOUND",
    filter_chains: [
      {
        name: "0.0.0.0_9080",
        filter_chain_match: { destination_port: { value: 9080 }, transport_protocol: "tls", server_names: ["reviews"] },
        filters: [
          hcm("inbound|9080||", {
            route_config: {
              name: "inbound|9080||",
              virtual_hosts: [
                {
                  name: "inbound|http|9080",
                  domains: ["*"],
                  routes: [{ name: "default", match: { prefix: "/" }, route: { cluster: "inbound|9080||" } }],
                },
              ],
            },
          }),
        ],
      },
      {
        name: "0.0.0.0_5432",
        filter_chain_match: { destination_port: { value: 5432 } },
        filters: [tcpProxy("inbound|5432||")],
      },
    ],
  },
]

export const routeConfiguration = (name: string): ProtoObject => ({
  name,
  virtual_hosts: [
    {
      name: "reviews.default.svc.cluster.local:80",
      domains: ["reviews.default.svc.cluster.local", "reviews"],
      routes: [
        {
          name: "canary",
          match: { prefix: "/canary" },
          route: { weighted_clusters: { clusters: [{ name: "a", weight: 1 }] } },
        },
        {
          name: "default",
          match: { prefix: "/" },
          route: { cluster: "outbound|80||reviews.default.svc.cluster.local", timeout: { seconds: "0", nanos: 0 } },
        },
      ],
    },
    {
      name: "old.example.com:80",
      domains: ["old.example.com"],
      routes: [{ match: { prefix: "/" }, redirect: { host_redirect: "new.example.com" } }],
    },
  ],
  validate_clusters: { value: false },
})

export const clusters = (): ReadonlyArray<ProtoObject> => [
  { name: "outbound|80||reviews.default.svc.cluster.local", type: "EDS", connect_timeout: { seconds: "10", nanos: 0 } },
  {
    name: "outbound|80|v2|reviews.default.svc.cluster.local",
    type: "EDS",
    connect_timeout: { seconds: "10", nanos: 0 },
  },
  { name: "outbound|3306||mysql.db.svc.cluster.local", type: "EDS" },
  { name: "PassthroughCluster", type: "ORIGINAL_DST" },
  { name: "inbound|9080||", type: "STATIC" },
]

/** Deep-freezes a value, so a test fails if patching mutates its input. */
export const frozen = <T>(value: T): T => {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) frozen(v)
    Object.freeze(value)
  }
  return value
}

export const names = (resources: ReadonlyArray<ProtoObject>): ReadonlyArray<unknown> => resources.map((r) => r.name)
