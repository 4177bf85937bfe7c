import { describe, expect, it } from "vitest"
import type { XdsCodecShape } from "../../../src/services/xds/cache/resource-cache.js"
import type { ProtoObject } from "../../../src/services/xds/cache/resource-spec.js"
import { TypedConfig } from "../../../src/services/xds/proxygen/well-known.js"
import { checkResource, decodeResource, envoyProtoFiles, envoyRoot, expectConformant, protoFileOf } from "./check.js"
import { edsCluster, httpListener, reviews, routes9080, tcpListener } from "./fixtures.js"

const T = "type.googleapis.com/envoy.config."
const LISTENER = `${T}listener.v3.Listener`
const ROUTE = `${T}route.v3.RouteConfiguration`
const CLUSTER = `${T}cluster.v3.Cluster`

/** A codec that knows no TcpProxy: its Any comes back empty, as protobufjs does for unknown types. */
const forgetful: XdsCodecShape = {
  encode: (_typeUrl, resource) => Buffer.from(JSON.stringify(resource)),
  decode: (_typeUrl, bytes) =>
    JSON.parse(Buffer.from(bytes).toString(), (_k, v) =>
      typeof v === "object" && v !== null && String(v["@type"]).endsWith("TcpProxy") ? {} : v,
    ) as ProtoObject,
}

describe("checkResource", () => {
  it("loads every extension the generators name", () => {
    expect(envoyProtoFiles().length).toBeGreaterThan(300)
    for (const url of Object.values(TypedConfig)) expect(protoFileOf(url), url).toBeDefined()
  })

  it("passes resources the server's codec round-trips", () => {
    expect(checkResource(LISTENER, httpListener)).toEqual([])
    expect(checkResource(ROUTE, routes9080)).toEqual([])
    expect(checkResource(CLUSTER, edsCluster(reviews("v1")))).toEqual([])
    expectConformant(CLUSTER, [edsCluster("a"), edsCluster("b")])
  })

  it("reports an Any type the codec does not know and fields it drops", () => {
    expect(checkResource(LISTENER, tcpListener, { codec: forgetful })).toEqual([
      "filter_chains[0].filters[0].typed_config: round trip: Any of type type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy did not survive the codec (its .proto is not loaded)",
    ])
    const lossy = checkResource(CLUSTER, { ...edsCluster("c"), lb_policy: "NOPE" })
    expect(lossy).toContain('lb_policy: unknown LbPolicy value "NOPE"')
    expect(lossy).toContain('lb_policy: round trip: dropped by the codec (was "NOPE")')
  })

  it("names the resource and every problem when a set is not conformant", () => {
    expect(() =>
      expectConformant(CLUSTER, [edsCluster("good"), { ...edsCluster(""), extra: true }], { codec: false }),
    ).toThrow(
      /2 conformance problem\(s\)[\s\S]*#1: extra: unknown field[\s\S]*#1: name: \(validate\.rules\)\.string\.min_len/,
    )
  })

  it("decodes with the full tree, expanding Any values", () => {
    const type = envoyRoot().lookupType("envoy.config.listener.v3.Listener")
    const decoded = decodeResource(LISTENER, type.encode(type.fromObject(tcpListener)).finish())
    expect(decoded).toMatchObject({
      name: "10.0.0.9_3306",
      traffic_direction: "OUTBOUND",
      filter_chains: [
        {
          filters: [
            {
              typed_config: {
                "@type": TypedConfig.tcpProxy,
                cluster: "outbound|3306||mysql.default.svc.cluster.local",
              },
            },
          ],
        },
      ],
    })
    expect(checkResource(LISTENER, decoded, { codec: false })).toEqual([])
  })
})
