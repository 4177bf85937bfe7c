import protobuf from "protobufjs"
import { describe, expect, it } from "vitest"
import { pgvProblems } from "../../../../src/services/xds/conformance/pgv.js"
import { formatProblem } from "../../../../src/services/xds/conformance/reflect.js"
import { envoyRoot } from "../../../support/proxygen/check.js"
import {
  edsCluster,
  endpoints,
  httpListener,
  passthroughCluster,
  reviews,
  routes9080,
  tcpListener,
  virtualInbound,
  virtualOutbound,
} from "../../../support/proxygen/fixtures.js"

const T = "type.googleapis.com/envoy."
const CLUSTER = `${T}config.cluster.v3.Cluster`
const LISTENER = `${T}config.listener.v3.Listener`
const ROUTE = `${T}config.route.v3.RouteConfiguration`
const CLA = `${T}config.endpoint.v3.ClusterLoadAssignment`

const pgv = (type: string, value: unknown) => pgvProblems(envoyRoot(), type, value).map(formatProblem)

describe("validate.rules from the Envoy protos", () => {
  it("accepts well-formed listeners, routes, clusters and endpoints", () => {
    for (const l of [httpListener, tcpListener, virtualOutbound("BlackHoleCluster"), virtualInbound("STRICT")])
      expect(pgv(LISTENER, l)).toEqual([])
    expect(pgv(ROUTE, routes9080)).toEqual([])
    expect(pgv(CLUSTER, edsCluster(reviews("v1")))).toEqual([])
    expect(pgv(CLUSTER, passthroughCluster)).toEqual([])
    expect(pgv(CLA, endpoints(reviews("v1"), "10.1.0.1", 9080))).toEqual([])
  })

  it("checks unset proto3 scalars at their default and durations, enums, wrappers", () => {
    expect(pgv(CLUSTER, { connect_timeout: { seconds: "0" }, lb_policy: 42 })).toEqual(
      [
        '(root).name: (validate.rules).string.min_len = 1 (got "")',
        "connect_timeout: (validate.rules).duration.gt = 0s (got 0s)",
        "lb_policy: (validate.rules).enum.defined_only (got 42, not a LbPolicy value)",
      ].map((l) => l.replace("(root).", "")),
    )
    expect(
      pgv(CLA, {
        cluster_name: "c",
        endpoints: [
          {
            lb_endpoints: [
              {
                endpoint: { address: { socket_address: { address: "a", port_value: 70000 } } },
                load_balancing_weight: { value: 0 },
              },
            ],
          },
        ],
      }),
    ).toEqual([
      "endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value: (validate.rules).uint32.lte = 65535 (got 70000)",
      "endpoints[0].lb_endpoints[0].load_balancing_weight: (validate.rules).uint32.gte = 1 (got 0)",
    ])
  })

  it("checks strings: min_len, max_bytes, header names and values", () => {
    const problems = pgv(ROUTE, {
      name: "r",
      virtual_hosts: [
        {
          name: "",
          domains: ["a\nb"],
          routes: [
            { match: { prefix: "/", headers: [{ name: "bad\rname", present_match: true }] }, route: { cluster: "c" } },
          ],
          request_headers_to_add: [{ header: { key: "x", value: "y".repeat(16385) } }],
        },
      ],
    })
    expect(problems).toEqual([
      'virtual_hosts[0].name: (validate.rules).string.min_len = 1 (got "")',
      'virtual_hosts[0].domains[0]: (validate.rules).string.well_known_regex = HTTP_HEADER_VALUE (strict: false) (got "a\\nb")',
      expect.stringMatching(
        /^virtual_hosts\[0\]\.routes\[0\]\.match\.headers\[0\]\.name: \(validate\.rules\)\.string\.well_known_regex = HTTP_HEADER_NAME/,
      ),
      expect.stringMatching(
        /^virtual_hosts\[0\]\.request_headers_to_add\[0\]\.header\.value: \(validate\.rules\)\.string\.max_bytes = 16384/,
      ),
    ])
  })

  it("checks repeated min_items and unique, a required oneof, a required message, recursing into Any", () => {
    const problems = pgv(ROUTE, {
      name: "r",
      virtual_hosts: [
        {
          name: "v",
          domains: [],
          routes: [
            { match: {}, route: { weighted_clusters: { clusters: [] } } },
            {
              match: { prefix: "/" },
              route: { cluster: "c", internal_redirect_policy: { response_headers_to_copy: ["a", "a"] } },
            },
          ],
        },
      ],
    })
    expect(problems).toEqual([
      "virtual_hosts[0].domains: (validate.rules).repeated.min_items = 1 (got 0)",
      "virtual_hosts[0].routes[0].match.path_specifier: (validate.required) oneof: one of prefix, path, safe_regex, connect_matcher, path_separated_prefix, path_match_policy must be set",
      "virtual_hosts[0].routes[0].route.weighted_clusters.clusters: (validate.rules).repeated.min_items = 1 (got 0)",
      'virtual_hosts[0].routes[1].route.internal_redirect_policy.response_headers_to_copy[1]: (validate.rules).repeated.unique (duplicate "a")',
    ])
    const listener = pgv(LISTENER, {
      name: "l",
      filter_chains: [
        {
          filter_chain_match: { destination_port: { value: 0 } },
          filters: [
            {
              name: "envoy.filters.network.http_connection_manager",
              typed_config: {
                "@type": `${T}extensions.filters.network.http_connection_manager.v3.HttpConnectionManager`,
                stat_prefix: "",
                rds: { route_config_name: "r" },
              },
            },
          ],
        },
      ],
    })
    expect(listener).toEqual([
      "filter_chains[0].filter_chain_match.destination_port: (validate.rules).uint32.gte = 1 (got 0)",
      'filter_chains[0].filters[0].typed_config.stat_prefix: (validate.rules).string.min_len = 1 (got "")',
      "filter_chains[0].filters[0].typed_config.rds.config_source: (validate.rules).message.required (not set)",
    ])
  })

  it("checks any.required, map min_pairs, enum not_in, double ranges, bool const", () => {
    expect(pgv(`${T}config.core.v3.TypedExtensionConfig`, { name: "x" })).toEqual([
      "typed_config: (validate.rules).any.required (not set)",
    ])
    expect(
      pgv(`${T}config.common.matcher.v3.Matcher.MatcherTree`, {
        input: {
          name: "i",
          typed_config: {
            "@type": `${T}config.core.v3.TypedExtensionConfig`,
            name: "n",
            typed_config: { "@type": `${T}extensions.filters.http.router.v3.Router` },
          },
        },
        exact_match_map: { map: {} },
      }),
    ).toEqual(["exact_match_map.map: (validate.rules).map.min_pairs = 1 (got 0)"])
    expect(
      pgv(`${T}extensions.transport_sockets.tls.v3.SubjectAltNameMatcher`, {
        san_type: "SAN_TYPE_UNSPECIFIED",
        matcher: { exact: "x" },
      }),
    ).toEqual(["san_type: (validate.rules).enum.not_in (got SAN_TYPE_UNSPECIFIED)"])
    expect(pgv(`${T}config.overload.v3.ThresholdTrigger`, { value: 1.5 })).toEqual([
      "value: (validate.rules).double.lte = 1 (got 1.5)",
    ])
    expect(pgv(`${T}config.listener.v3.ListenerFilterChainMatchPredicate`, { any_match: false })).toEqual([
      "any_match: (validate.rules).bool.const = true (got false)",
    ])
  })
})

describe("validate.rules kinds the Envoy protos do not use", () => {
  const base = protobuf.Root.fromJSON(protobuf.common.get("google/protobuf/duration.proto")!)
  const root = protobuf.parse(
    `syntax = "proto3";
     package t;
     import "google/protobuf/duration.proto";
     message M {
       string p = 1 [(validate.rules).string = {prefix: "outbound|", not_contains: " ", pattern: "^[a-z|0-9]+$"}];
       int64 big = 2 [(validate.rules).int64 = {gt: 5, lt: 10}];
       uint32 choice = 3 [(validate.rules).uint32 = {in: [1, 2, 3]}];
       uint32 outside = 4 [(validate.rules).uint32 = {gt: 10, lt: 5}];
       string name = 5 [(validate.rules).string = {hostname: true, ignore_empty: true}];
       google.protobuf.Duration d = 6 [(validate.rules).duration = {required: true, lte: {seconds: 5}}];
       repeated string many = 7 [(validate.rules).repeated = {max_items: 1}];
       bytes b = 8 [(validate.rules).bytes = {min_len: 2}];
       int32 fixed = 9 [(validate.rules).int32.const = 7];
     }`,
    base,
    { keepCase: true },
  ).root
  root.resolveAll()
  const check = (v: unknown) => pgvProblems(root, "t.M", v).map(formatProblem)

  it("reports each violated rule with its path", () => {
    expect(
      check({
        p: "inbound x",
        big: "10",
        choice: 4,
        outside: 7,
        name: "not a host",
        many: ["a", "b"],
        b: "AA==",
        fixed: 7,
      }),
    ).toEqual([
      'p: (validate.rules).string.prefix = "outbound|" (got "inbound x")',
      'p: (validate.rules).string.not_contains = " " (got "inbound x")',
      'p: (validate.rules).string.pattern = "^[a-z|0-9]+$" (got "inbound x")',
      "big: (validate.rules).int64.lt = 10 (got 10)",
      "choice: (validate.rules).uint32.in [1, 2, 3] (got 4)",
      "outside: (validate.rules).uint32.gt = 10 or uint32.lt = 5 (got 7)",
      'name: (validate.rules).string.hostname expected (got "not a host")',
      "d: (validate.rules).duration.required (not set)",
      "many: (validate.rules).repeated.max_items = 1 (got 2)",
      "b: (validate.rules).bytes.min_len = 2 (got 1)",
    ])
  })

  it("passes a conforming message", () => {
    expect(
      check({
        p: "outbound|80",
        big: "7",
        choice: 2,
        outside: 11,
        d: { seconds: "5" },
        many: ["a"],
        b: "AAA=",
        fixed: 7,
      }),
    ).toEqual([])
  })
})
