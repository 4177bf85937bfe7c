/**
 * `typed(url, body)` checks the body against the message its type URL names (xds-types.ts, generated
 * from the protos), and the codec encodes what it builds. The `@ts-expect-error` lines are the
 * compile-time half: `tsc` fails when one of them stops being an error (a type went loose).
 */
import { describe, expect, it } from "vitest"
import { loadXdsProtos } from "../../../../src/layers/xds/protos.js"
import { TypeUrl } from "../../../../src/services/xds/protocol/type-urls.js"
import { typed } from "../../../../src/services/xds/protocol/typed-any.js"
import type { Cluster, XdsMessageByTypeUrl } from "../../../../src/services/xds/protocol/xds-types.js"
import { TypedConfig } from "../../../../src/services/xds/proxygen/well-known.js"

describe("typed Any", () => {
  it("writes the type URL first, then the fields, as protobufjs reads an inline Any", () => {
    const any = typed(TypedConfig.tcpProxy, { stat_prefix: "s", cluster: "c" })
    expect(any).toEqual({ "@type": TypedConfig.tcpProxy, stat_prefix: "s", cluster: "c" })
    expect(Object.keys(any)[0]).toBe("@type")
  })

  it("rejects at compile time a field the URL's message does not have, or of the wrong type", () => {
    // @ts-expect-error: TcpProxy has no `clusters` (a typo protobufjs would drop without a word)
    typed(TypedConfig.tcpProxy, { stat_prefix: "s", clusters: "c" })
    // @ts-expect-error: `stat_prefix` is a string
    typed(TypedConfig.tcpProxy, { stat_prefix: 5 })
    // @ts-expect-error: not an enum name of HttpConnectionManager.CodecType
    typed(TypedConfig.httpConnectionManager, { codec_type: "HTTP5" })
    // @ts-expect-error: a type URL the generators never put in an Any
    typed("type.googleapis.com/envoy.extensions.filters.http.gzip.v3.Gzip", {})
    const cluster: Cluster = {
      name: "c",
      // @ts-expect-error: a Duration is `{seconds, nanos}` for protobufjs, not a "5s" string
      connect_timeout: "5s",
    }
    expect(cluster.name).toBe("c")
  })

  it("the encoded bytes carry every field the typed builders set (a Cluster with a typed transport socket)", () => {
    const { codec } = loadXdsProtos()
    const cluster: XdsMessageByTypeUrl[typeof TypeUrl.Cluster] = {
      name: "outbound|80||a.default.svc.cluster.local",
      type: "EDS",
      connect_timeout: { seconds: "10", nanos: 0 },
      lb_policy: "LEAST_REQUEST",
      transport_socket: {
        name: "envoy.transport_sockets.tls",
        typed_config: typed(TypedConfig.upstreamTls, { sni: "a.default.svc.cluster.local" }),
      },
    }
    const decoded = codec.decode(TypeUrl.Cluster, codec.encode(TypeUrl.Cluster, cluster))
    expect(decoded).toMatchObject({
      name: cluster.name,
      type: "EDS",
      connect_timeout: { seconds: "10" },
      lb_policy: "LEAST_REQUEST",
      transport_socket: { typed_config: { "@type": TypedConfig.upstreamTls, sni: "a.default.svc.cluster.local" } },
    })
  })
})
