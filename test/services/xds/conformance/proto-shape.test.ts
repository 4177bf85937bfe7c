import { describe, expect, it } from "vitest"
import { protoShapeProblems } from "../../../../src/services/xds/conformance/proto-shape.js"
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

const CLUSTER = "type.googleapis.com/envoy.config.cluster.v3.Cluster"
const LISTENER = "type.googleapis.com/envoy.config.listener.v3.Listener"
const ROUTE = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration"
const CLA = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment"

const shape = (type: string, value: unknown) => protoShapeProblems(envoyRoot(), type, value).map(formatProblem)

describe("proto shape", () => {
  it("accepts well-formed listeners, routes, clusters and endpoints", () => {
    for (const l of [httpListener, tcpListener, virtualOutbound("PassthroughCluster"), virtualInbound("PERMISSIVE")])
      expect(shape(LISTENER, l)).toEqual([])
    expect(shape(ROUTE, routes9080)).toEqual([])
    expect(shape(CLUSTER, edsCluster(reviews("v1")))).toEqual([])
    expect(shape(CLUSTER, passthroughCluster)).toEqual([])
    expect(shape(CLA, endpoints(reviews("v1"), "10.1.0.1", 9080))).toEqual([])
  })

  it("accepts a google.protobuf.Struct in its wire form and the oneof markers of decoded objects", () => {
    const cluster = {
      ...edsCluster("c"),
      metadata: {
        filter_metadata: { istio: { fields: { services: { listValue: { values: [{ stringValue: "a" }] } } } } },
      },
      cluster_discovery_type: "type",
    }
    expect(shape(CLUSTER, cluster)).toEqual([])
  })

  it("reports unknown fields, at any depth and inside Any values", () => {
    const problems = shape(LISTENER, {
      ...httpListener,
      bogus: 1,
      filter_chains: [
        {
          filters: [
            {
              name: "x",
              typed_config: {
                "@type": "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
                stat_prefix: "s",
                cluster: "c",
                clusterName: "c",
              },
            },
          ],
        },
      ],
    })
    expect(problems).toEqual([
      "filter_chains[0].filters[0].typed_config.clusterName: unknown field of envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
      "bogus: unknown field of envoy.config.listener.v3.Listener",
    ])
  })

  it("reports wrong value kinds", () => {
    const problems = shape(CLUSTER, {
      name: 5,
      connect_timeout: "10s",
      per_connection_buffer_limit_bytes: { value: "1024" },
      load_assignment: {
        cluster_name: "c",
        endpoints: [
          { lb_endpoints: [{ endpoint: { address: { socket_address: { address: "a", port_value: "80" } } } }] },
        ],
      },
      ignore_health_on_host_removal: "yes",
      dns_refresh_rate: { seconds: "x" },
    })
    expect(problems).toEqual([
      "name: string expected, got number",
      "connect_timeout: google.protobuf.Duration expects an object, got string",
      "per_connection_buffer_limit_bytes.value: uint32 expects an integer number, got string",
      "load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value: uint32 expects an integer number, got string",
      "ignore_health_on_host_removal: bool expected, got string",
      'dns_refresh_rate.seconds: int64 expects an integer (as a string), got "x"',
    ])
  })

  it("reports unknown enum values, unresolvable Any types and an Any without a type", () => {
    const problems = shape(LISTENER, {
      name: "l",
      traffic_direction: "SIDEWAYS",
      filter_chains: [
        {
          filters: [
            { name: "a", typed_config: { "@type": "type.googleapis.com/envoy.nope.v3.Nope" } },
            { name: "b", typed_config: {} },
          ],
        },
      ],
    })
    expect(problems).toEqual([
      'traffic_direction: unknown TrafficDirection value "SIDEWAYS"',
      "filter_chains[0].filters[0].typed_config: Any type type.googleapis.com/envoy.nope.v3.Nope is not a known message",
      'filter_chains[0].filters[1].typed_config: Any without "@type"',
    ])
  })

  it("reports two members of one oneof, non-array repeated fields, non-object maps, bad durations", () => {
    const problems = shape(ROUTE, {
      name: "r",
      virtual_hosts: [
        {
          name: "v",
          domains: "a.example.com",
          typed_per_filter_config: ["x"],
          routes: [
            { match: { prefix: "/", path: "/x" }, route: { cluster: "c", timeout: { seconds: "1", nanos: -5 } } },
          ],
        },
      ],
    })
    expect(problems).toEqual([
      "virtual_hosts[0].domains: repeated field expects an array, got string",
      "virtual_hosts[0].typed_per_filter_config: map expected (an object), got array",
      "virtual_hosts[0].routes[0].match.path_specifier: more than one field of oneof set: prefix, path",
      "virtual_hosts[0].routes[0].route.timeout: duration seconds and nanos have different signs",
    ])
  })

  it("reports an unknown resource type", () => {
    expect(shape("type.googleapis.com/envoy.nope.Nope", {})).toEqual([
      "(root): unknown message type type.googleapis.com/envoy.nope.Nope",
    ])
  })
})
