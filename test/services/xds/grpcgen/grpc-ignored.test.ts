/**
 * DestinationRule fields proxyless gRPC clients do not get are said once per resource (info,
 * scope `grpcgen`): a second push of the same resource says nothing new, a changed one does.
 */
import { describe, expect, it } from "@effect/vitest"
import type { DestinationRuleSpec } from "../../../../src/services/config-model/schemas/destination-rule.js"
import { asProtoData } from "../../../../src/services/xds/cache/resource-spec.js"
import { makeNoticeLog } from "../../../../src/services/xds/grpcgen/generator-notices.js"
import { generate } from "../../../../src/services/xds/grpcgen/grpc-gen.js"
import { ignoredDestinationRuleFields } from "../../../../src/services/xds/grpcgen/grpc-ignored.js"
import { makePushContext } from "../../../../src/services/xds/model/push-context.js"
import { TypeUrl } from "../../../../src/services/xds/protocol/type-urls.js"
import { destinationRule, ECHO, endpoint, input, service } from "../../../fixtures/xds/mesh.js"

const spec: DestinationRuleSpec = {
  host: "echo",
  trafficPolicy: {
    loadBalancer: { simple: "LEAST_REQUEST" },
    connectionPool: { tcp: { connectTimeout: "1s", maxConnections: 10 }, http: { http2MaxRequests: 5 } },
    outlierDetection: { consecutive5xxErrors: 3, interval: "10s" },
  },
  subsets: [{ name: "v1", labels: { version: "v1" }, trafficPolicy: { tls: { mode: "SIMPLE", sni: "echo" } } }],
}

const mesh = (drSpec: unknown) =>
  input({
    services: [service(ECHO, [80])],
    endpoints: [endpoint(ECHO, "10.0.0.1", 8080, { labels: { version: "v1" } })],
    destinationRules: [destinationRule("echo", drSpec)],
  })

/** One server's notice log, fed what each generation returns (as the responder does). */
const log = makeNoticeLog()

const clusters = (drSpec: unknown) => {
  const generated = generate(makePushContext(mesh(drSpec)), TypeUrl.Cluster, { wildcard: true, names: [] })
  log.report(generated.warnings)
  return generated.resources
}

const grpcgen = () => log.take().filter((n) => n.scope === "grpcgen")

describe("DestinationRule fields proxyless gRPC clients ignore", () => {
  it("lists dropped and changed fields, not the ones the generator maps", () => {
    expect(ignoredDestinationRuleFields(spec)).toEqual([
      "trafficPolicy.connectionPool.tcp.connectTimeout",
      "trafficPolicy.loadBalancer.simple LEAST_REQUEST (served as ROUND_ROBIN: gRPC clients have no such balancer)",
      "trafficPolicy.outlierDetection.consecutive5xxErrors (gRPC clients eject by success rate, not by consecutive errors)",
      "subsets[0].trafficPolicy.tls.mode SIMPLE (served as plaintext: proxyless clients get mesh mTLS only)",
      "subsets[0].trafficPolicy.tls.sni",
    ])
    expect(
      ignoredDestinationRuleFields({
        host: "echo",
        trafficPolicy: { loadBalancer: { simple: "ROUND_ROBIN" }, tls: { mode: "ISTIO_MUTUAL" } },
      }),
    ).toEqual([])
  })

  it("are noticed once per resource at info: the second push of the same resource repeats nothing", () => {
    log.take()
    clusters(spec)
    const first = grpcgen()
    expect(first).toHaveLength(1)
    expect(first[0]!.level).toBe("info")
    expect(first[0]!.message).toMatch(
      /^DestinationRule default\/echo: proxyless gRPC clients ignore trafficPolicy\.connectionPool\.tcp\.connectTimeout; trafficPolicy\.loadBalancer\.simple LEAST_REQUEST/,
    )
    // Same resource pushed again, and a reload of the same content (a new object): nothing new.
    clusters(spec)
    clusters(structuredClone(spec))
    expect(grpcgen()).toEqual([])
    // Changed content with other ignored fields: said again.
    clusters({ ...spec, trafficPolicy: { loadBalancer: { simple: "RANDOM" } } })
    expect(grpcgen().map((n) => n.message)).toEqual([
      "DestinationRule default/echo: proxyless gRPC clients ignore trafficPolicy.loadBalancer.simple RANDOM (served as ROUND_ROBIN: gRPC clients have no such balancer); subsets[0].trafficPolicy.tls.mode SIMPLE (served as plaintext: proxyless clients get mesh mTLS only); subsets[0].trafficPolicy.tls.sni",
    ])
  })

  it("a DestinationRule the client gets whole says nothing", () => {
    log.take()
    clusters({ host: "echo", trafficPolicy: { loadBalancer: { consistentHash: { minimumRingSize: 1024 } } } })
    expect(grpcgen()).toEqual([])
  })

  it("LEAST_REQUEST is served as ROUND_ROBIN: @grpc/grpc-js-xds accepts no other lb_policy but RING_HASH", () => {
    const [cluster] = clusters(spec).map((s) => asProtoData(s.build()))
    expect(cluster!.lb_policy).toBe("ROUND_ROBIN")
  })
})
