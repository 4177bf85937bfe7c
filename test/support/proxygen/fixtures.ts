/**
 * Hand-made proxy resources in the generators' ProtoObject form, shaped like the reference's
 * sidecar config (a reviews service split v1/v3 with a header route and a delay fault, a TCP
 * service, the virtual outbound/inbound listeners with mTLS and RBAC), for the tests of the
 * checks and of the evaluator.
 */
import type { ProtoObject } from "../../../src/services/xds/cache/resource-spec.js"
import { TypedConfig } from "../../../src/services/xds/proxygen/well-known.js"

export const REVIEWS = "reviews.default.svc.cluster.local"
export const reviews = (subset: string): string => `outbound|9080|${subset}|${REVIEWS}`

const ads = { ads: {}, resource_api_version: "V3" }
const sds = (name: string) => ({
  name,
  sds_config: {
    api_config_source: {
      api_type: "GRPC",
      transport_api_version: "V3",
      grpc_services: [{ envoy_grpc: { cluster_name: "sds-grpc" } }],
    },
    resource_api_version: "V3",
  },
})

export const edsCluster = (name: string): ProtoObject => ({
  name,
  type: "EDS",
  eds_cluster_config: { eds_config: ads, service_name: name },
  connect_timeout: { seconds: "10", nanos: 0 },
  lb_policy: "LEAST_REQUEST",
  circuit_breakers: { thresholds: [{ max_connections: { value: 4294967295 }, max_retries: { value: 4294967295 } }] },
})

export const passthroughCluster: ProtoObject = {
  name: "PassthroughCluster",
  type: "ORIGINAL_DST",
  connect_timeout: { seconds: "10", nanos: 0 },
  lb_policy: "CLUSTER_PROVIDED",
}

export const endpoints = (cluster: string, ip: string, port: number): ProtoObject => ({
  cluster_name: cluster,
  endpoints: [
    {
      locality: { region: "region1", zone: "zone1" },
      lb_endpoints: [
        {
          endpoint: { address: { socket_address: { address: ip, port_value: port } } },
          health_status: "HEALTHY",
          load_balancing_weight: { value: 1 },
        },
      ],
    },
  ],
})

const router = { name: "envoy.filters.http.router", typed_config: { "@type": TypedConfig.router } }

export const hcm = (statPrefix: string, route: ProtoObject, httpFilters: ReadonlyArray<ProtoObject> = []) => ({
  name: "envoy.filters.network.http_connection_manager",
  typed_config: {
    "@type": TypedConfig.httpConnectionManager,
    stat_prefix: statPrefix,
    ...route,
    http_filters: [...httpFilters, router],
  },
})

export const tcpProxy = (cluster: string) => ({
  name: "envoy.filters.network.tcp_proxy",
  typed_config: { "@type": TypedConfig.tcpProxy, stat_prefix: cluster, cluster },
})

const address = (ip: string, port: number) => ({ socket_address: { address: ip, port_value: port } })

/** `0.0.0.0_9080`: HTTP, routes from RDS "9080". */
export const httpListener: ProtoObject = {
  name: "0.0.0.0_9080",
  address: address("0.0.0.0", 9080),
  traffic_direction: "OUTBOUND",
  bind_to_port: { value: false },
  filter_chains: [
    {
      filters: [
        hcm("outbound_0.0.0.0_9080", { rds: { config_source: ads, route_config_name: "9080" } }, [
          { name: "envoy.filters.http.fault", typed_config: { "@type": TypedConfig.fault } },
        ]),
      ],
    },
  ],
}

/** `10.0.0.9_3306`: a TCP service. */
export const tcpListener: ProtoObject = {
  name: "10.0.0.9_3306",
  address: address("10.0.0.9", 3306),
  traffic_direction: "OUTBOUND",
  bind_to_port: { value: false },
  filter_chains: [{ filters: [tcpProxy(`outbound|3306||mysql.default.svc.cluster.local`)] }],
}

export const virtualOutbound = (cluster: "PassthroughCluster" | "BlackHoleCluster"): ProtoObject => ({
  name: "virtualOutbound",
  address: address("0.0.0.0", 15001),
  use_original_dst: { value: true },
  traffic_direction: "OUTBOUND",
  filter_chains: [{ name: "virtualOutbound-catchall-tcp", filters: [tcpProxy(cluster)] }],
})

const fault = {
  "@type": TypedConfig.fault,
  delay: { fixed_delay: { seconds: "7", nanos: 0 }, percentage: { numerator: 100, denominator: "HUNDRED" } },
}

/** RDS "9080": jason → v2 with a 7 s delay; everyone else 90/10 over v1/v3; a redirect host. */
export const routes9080: ProtoObject = {
  name: "9080",
  validate_clusters: { value: false },
  virtual_hosts: [
    {
      name: `${REVIEWS}:9080`,
      domains: [REVIEWS, `${REVIEWS}:9080`, "reviews", "reviews:9080", "10.0.0.3", "10.0.0.3:9080"],
      routes: [
        {
          name: "jason",
          match: { prefix: "/", headers: [{ name: "end-user", string_match: { exact: "jason" } }] },
          route: { cluster: reviews("v2"), timeout: { seconds: "0", nanos: 0 } },
          typed_per_filter_config: { "envoy.filters.http.fault": fault },
        },
        {
          name: "split",
          match: { prefix: "/" },
          route: {
            weighted_clusters: {
              clusters: [
                { name: reviews("v1"), weight: { value: 90 } },
                { name: reviews("v3"), weight: { value: 10 } },
              ],
            },
            timeout: { seconds: "0", nanos: 0 },
            retry_policy: { retry_on: "connect-failure,refused-stream,unavailable", num_retries: { value: 2 } },
          },
        },
      ],
    },
    {
      name: "old.example.com:9080",
      domains: ["old.example.com", "*.old.example.com"],
      routes: [{ match: { path: "/moved" }, redirect: { host_redirect: "new.example.com", path_redirect: "/new" } }],
    },
    {
      name: "allow_any",
      domains: ["*"],
      routes: [
        {
          name: "allow_any",
          match: { prefix: "/" },
          route: { cluster: "PassthroughCluster", timeout: { seconds: "0" } },
        },
      ],
    },
  ],
}

export const SLEEP = "spiffe://cluster.local/ns/default/sa/sleep"

/** HTTP RBAC: DENY /admin to anyone; ALLOW GET from the sleep identity; AUDIT everything. */
export const rbacFilters: ReadonlyArray<ProtoObject> = [
  {
    name: "envoy.filters.http.rbac",
    typed_config: {
      "@type": TypedConfig.rbac,
      rules: {
        action: "DENY",
        policies: {
          "ns[default]-policy[deny-admin]-rule[0]": {
            permissions: [
              { and_rules: { rules: [{ or_rules: { rules: [{ url_path: { path: { prefix: "/admin" } } }] } }] } },
            ],
            principals: [{ and_ids: { ids: [{ any: true }] } }],
          },
        },
      },
      // Shadow rules only count in stats: this one would deny everything if enforced.
      shadow_rules: {
        action: "DENY",
        policies: { "shadow-deny-all": { permissions: [{ any: true }], principals: [{ any: true }] } },
      },
    },
  },
  {
    name: "envoy.filters.http.rbac",
    typed_config: {
      "@type": TypedConfig.rbac,
      rules: {
        action: "LOG",
        policies: {
          "ns[default]-policy[audit-all]-rule[0]": { permissions: [{ any: true }], principals: [{ any: true }] },
        },
      },
    },
  },
  {
    name: "envoy.filters.http.rbac",
    typed_config: {
      "@type": TypedConfig.rbac,
      rules: {
        policies: {
          "ns[default]-policy[allow-sleep]-rule[0]": {
            permissions: [
              {
                and_rules: {
                  rules: [{ or_rules: { rules: [{ header: { name: ":method", string_match: { exact: "GET" } } }] } }],
                },
              },
            ],
            principals: [
              {
                and_ids: {
                  ids: [{ or_ids: { ids: [{ authenticated: { principal_name: { exact: SLEEP } } }] } }],
                },
              },
            ],
          },
        },
      },
    },
  },
]

const inboundHcm = (httpFilters: ReadonlyArray<ProtoObject>) =>
  hcm(
    "inbound_0.0.0.0_8080",
    {
      route_config: {
        name: "inbound|8080||",
        virtual_hosts: [
          {
            name: "inbound|http|8080",
            domains: ["*"],
            routes: [
              {
                name: "default",
                match: { prefix: "/" },
                route: { cluster: "inbound|8080||", timeout: { seconds: "0" } },
              },
            ],
          },
        ],
      },
    },
    httpFilters,
  )

const downstreamTls = {
  name: "envoy.transport_sockets.tls",
  typed_config: {
    "@type": TypedConfig.downstreamTls,
    require_client_certificate: { value: true },
    common_tls_context: {
      alpn_protocols: ["h2", "http/1.1"],
      tls_certificate_sds_secret_configs: [sds("default")],
      combined_validation_context: {
        default_validation_context: {},
        validation_context_sds_secret_config: sds("ROOTCA"),
      },
    },
  },
}

/** virtualInbound for port 8080 under STRICT (mTLS only) or PERMISSIVE (mTLS or plaintext). */
export const virtualInbound = (mode: "STRICT" | "PERMISSIVE", httpFilters = rbacFilters): ProtoObject => ({
  name: "virtualInbound",
  address: address("0.0.0.0", 15006),
  traffic_direction: "INBOUND",
  listener_filters: [
    { name: "envoy.filters.listener.original_dst", typed_config: { "@type": TypedConfig.originalDst } },
    { name: "envoy.filters.listener.tls_inspector", typed_config: { "@type": TypedConfig.tlsInspector } },
    { name: "envoy.filters.listener.http_inspector", typed_config: { "@type": TypedConfig.httpInspector } },
  ],
  filter_chains: [
    {
      name: "0.0.0.0_8080",
      filter_chain_match: {
        destination_port: { value: 8080 },
        transport_protocol: "tls",
        application_protocols: ["istio-http/1.0", "istio-http/1.1", "istio-h2"],
      },
      transport_socket: downstreamTls,
      filters: [inboundHcm(httpFilters)],
    },
    ...(mode === "PERMISSIVE"
      ? [
          {
            name: "0.0.0.0_8080",
            filter_chain_match: {
              destination_port: { value: 8080 },
              transport_protocol: "raw_buffer",
              application_protocols: ["http/1.1", "h2c"],
            },
            filters: [inboundHcm(httpFilters)],
          },
        ]
      : []),
    {
      name: "PassthroughFilterChain",
      filter_chain_match: { transport_protocol: "raw_buffer" },
      filters: [tcpProxy("InboundPassthroughCluster")],
    },
  ],
})
