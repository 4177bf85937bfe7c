/** The sidecar's inbound clusters: per port to loopback, Sidecar ingress endpoints, the passthrough. */
import { describe, expect, it } from "vitest"
import { TypeUrl } from "../../../../../src/services/xds/protocol/type-urls.js"
import { generateInboundClusters } from "../../../../../src/services/xds/proxygen/inbound/index.js"
import { resource } from "../../../../fixtures/xds/mesh.js"
import { conformanceProblems, push, sidecar } from "./fixtures.js"

// biome-ignore lint/suspicious/noExplicitAny: generated protos are walked loosely in assertions
type J = any

const build = (specs: ReadonlyArray<{ readonly build: () => object }>): ReadonlyArray<J> => {
  const clusters = specs.map((s) => s.build())
  expect(conformanceProblems(TypeUrl.Cluster, clusters)).toEqual([])
  return clusters
}

describe("inbound clusters", () => {
  it("sends each port to the workload on loopback, with the mesh's connect timeout", () => {
    const p = push({}, {}, undefined)
    const options = { ...p.options, proxy: { ...p.options.proxy, connectTimeoutMs: 2500 } }
    const clusters = build(generateInboundClusters(push({}, {}, options), sidecar()))
    expect(clusters.map((c) => c.name)).toEqual(["inbound|3306||", "inbound|8080||", "InboundPassthroughCluster"])
    const http = clusters[1]
    expect(http.type).toBe("STATIC")
    expect(http.connect_timeout).toEqual({ seconds: "2", nanos: 500_000_000 })
    expect(http.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address).toEqual({
      address: "127.0.0.1",
      port_value: 8080,
    })
    expect(
      http.typed_extension_protocol_options["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"]
        .use_downstream_protocol_config,
    ).toBeDefined()
    expect(clusters[0].typed_extension_protocol_options).toBeUndefined()
    const passthrough = clusters[2]
    expect(passthrough).toMatchObject({
      type: "ORIGINAL_DST",
      lb_policy: "CLUSTER_PROVIDED",
      upstream_bind_config: { source_address: { address: "127.0.0.6", port_value: 0 } },
    })
  })

  it("shares each cluster between replicas", () => {
    const p = push()
    const keys = (ip: string) => generateInboundClusters(p, sidecar(ip)).map((s) => s.key)
    expect(keys("10.0.0.5")).toEqual(keys("10.0.0.6"))
  })

  it("uses the Sidecar ingress default endpoints", () => {
    const sc = resource("Sidecar", "reviews", {
      ingress: [
        { port: { number: 9090, protocol: "GRPC", name: "grpc" }, defaultEndpoint: "127.0.0.1:8080" },
        { port: { number: 9091, protocol: "TCP", name: "tcp" }, defaultEndpoint: "0.0.0.0:7070" },
        { port: { number: 9092, protocol: "HTTP", name: "uds" }, defaultEndpoint: "unix:///var/run/app.sock" },
      ],
    })
    const clusters = build(generateInboundClusters(push({}, { sidecars: [sc] }), sidecar()))
    expect(clusters.map((c) => c.name)).toEqual([
      "inbound|9090||",
      "inbound|9091||",
      "inbound|9092||",
      "InboundPassthroughCluster",
    ])
    expect(
      clusters[0].typed_extension_protocol_options["envoy.extensions.upstreams.http.v3.HttpProtocolOptions"]
        .explicit_http_config,
    ).toEqual({ http2_protocol_options: {} })
    expect(clusters[1]).toMatchObject({
      type: "ORIGINAL_DST",
      original_dst_lb_config: { upstream_port_override: { value: 7070 } },
    })
    expect(clusters[2].load_assignment.endpoints[0].lb_endpoints[0].endpoint.address).toEqual({
      pipe: { path: "/var/run/app.sock" },
    })
  })
})
