/**
 * Two servers in one process share nothing: what the responder memoises (shared sets,
 * derivations, delta entries) and the generator notices it collects live in each server's
 * resource cache, not in the module.
 */
import { describe, expect, it } from "@effect/vitest"
import { loadXdsProtos } from "../../../../src/layers/xds/protos.js"
import { makeResourceCache } from "../../../../src/services/xds/cache/resource-cache.js"
import {
  deltaEntry,
  MAX_NOT_FOUND,
  proxyInfo,
  recordDerivation,
  sotwResponse,
  takeGeneratorNotices,
} from "../../../../src/services/xds/cache/responder.js"
import { clusterName } from "../../../../src/services/xds/grpcgen/grpc-gen.js"
import { derivePushContext, makePushContext } from "../../../../src/services/xds/model/push-context.js"
import { plainToStruct } from "../../../../src/services/xds/protocol/messages.js"
import { TypeUrl } from "../../../../src/services/xds/protocol/type-urls.js"
import { destinationRule, ECHO, endpoint, input, service, virtualService } from "../../../fixtures/xds/mesh.js"

const codec = loadXdsProtos().codec
const OTHER = "other.default.svc.cluster.local"

const base = input({
  services: [service(ECHO), service(OTHER)],
  endpoints: [endpoint(ECHO, "10.0.0.1", 8080), endpoint(OTHER, "10.0.0.9", 8080)],
  destinationRules: [
    // LEAST_REQUEST is served as ROUND_ROBIN: the generator notices it (info, scope grpcgen).
    destinationRule("echo", { host: ECHO, trafficPolicy: { loadBalancer: { simple: "LEAST_REQUEST" } } }),
  ],
})
const names = [clusterName(ECHO, 80), clusterName(OTHER, 80)].sort()
const clusters = { typeUrl: TypeUrl.Cluster, names, wildcard: false }
const endpoints = { typeUrl: TypeUrl.Endpoint, names, wildcard: false }
const reads = (cache: ReturnType<typeof makeResourceCache>) => cache.stats().hits + cache.stats().misses

describe("two servers' responders share nothing", () => {
  it("the same generator notice is reported by each server, once each", () => {
    const push = makePushContext(base, undefined, "1")
    const a = makeResourceCache(codec)
    const b = makeResourceCache(codec)
    sotwResponse(push, a, clusters, "n1")
    sotwResponse(push, b, clusters, "n1")
    const fromA = takeGeneratorNotices(a)
    const fromB = takeGeneratorNotices(b)
    expect(fromA).toHaveLength(1)
    expect(fromA[0]).toMatchObject({ level: "info", scope: "grpcgen" })
    expect(fromA[0]!.message).toMatch(/^DestinationRule default\/echo: proxyless gRPC clients ignore/)
    expect(fromB).toEqual(fromA)
    // The next push through either server says nothing new: the text was reported there.
    const next = makePushContext(base, undefined, "2")
    sotwResponse(next, a, clusters, "n2")
    sotwResponse(next, b, clusters, "n2", undefined, false)
    expect(takeGeneratorNotices(a)).toEqual([])
    expect(takeGeneratorNotices(b)).toEqual([])
  })

  it("a set resolved through one cache is not shared with another", () => {
    const push = makePushContext(base, undefined, "1")
    const a = makeResourceCache(codec)
    const b = makeResourceCache(codec)
    expect(sotwResponse(push, a, clusters, "n1").sharedReads).toBe(0)
    expect(sotwResponse(push, b, clusters, "n2").sharedReads).toBe(0)
    expect(reads(b)).toBe(names.length)
    // Within one cache the set is shared as before.
    expect(sotwResponse(push, a, clusters, "n3").sharedReads).toBe(names.length)
  })

  it("a derivation recorded for one cache is not used by the other", () => {
    const previous = makePushContext(base, undefined, "1")
    const next = { ...base, endpoints: [endpoint(ECHO, "10.0.0.2", 8080), base.endpoints[1]!] }
    const derived = derivePushContext(previous, next, new Set([ECHO]), "2")
    const a = makeResourceCache(codec)
    const b = makeResourceCache(codec)
    sotwResponse(previous, a, endpoints, "n1")
    sotwResponse(previous, b, endpoints, "n1")
    recordDerivation(a, derived, previous, new Set([ECHO]))
    const [beforeA, beforeB] = [reads(a), reads(b)]
    sotwResponse(derived, a, endpoints, "n2")
    sotwResponse(derived, b, endpoints, "n2")
    // a carries the set over (only echo's cluster is resolved again); b resolves it whole.
    expect(reads(a) - beforeA).toBe(1)
    expect(reads(b) - beforeB).toBe(names.length)
  })

  it("delta entries are one object per entry within a cache, not across caches", () => {
    const a = makeResourceCache(codec)
    const b = makeResourceCache(codec)
    const [resource] = a.resolve(TypeUrl.Cluster, [{ name: "x", key: "k", build: () => ({ name: "x" }) }])
    expect(deltaEntry(a, resource!)).toBe(deltaEntry(a, resource!))
    expect(deltaEntry(b, resource!)).not.toBe(deltaEntry(a, resource!))
    expect(deltaEntry(b, resource!)).toEqual(deltaEntry(a, resource!))
  })
})

describe("endpoint pushes to a data-plane proxy", () => {
  const sidecar = proxyInfo({
    id: "sidecar~10.1.0.1~app-1.default~default.svc.cluster.local",
    metadata: plainToStruct({ NAMESPACE: "default" }),
  })
  const moved = { ...base, endpoints: [endpoint(ECHO, "10.0.0.2", 8080), base.endpoints[1]!] }

  it("carry only the changed hosts' clusters once the proxy took its set", () => {
    const cache = makeResourceCache(codec)
    const first = sotwResponse(makePushContext(base, undefined, "1"), cache, endpoints, "n1", sidecar)
    expect(first.response.resources).toHaveLength(2)
    const held = { ...endpoints, digestSent: first.digest, versionSent: "1", versionAcked: "1" }
    const next = sotwResponse(makePushContext(moved, undefined, "2"), cache, held, "n2", sidecar, true, new Set([ECHO]))
    expect(next.response.resources).toHaveLength(1)
    expect(codec.decode(TypeUrl.Endpoint, next.response.resources[0]!.value)).toMatchObject({
      cluster_name: clusterName(ECHO, 80),
    })
    // The digest is the whole set's: what the proxy holds after applying the partial response.
    expect(next.digest).toBe(
      sotwResponse(makePushContext(moved, undefined, "2"), cache, endpoints, "n3", sidecar).digest,
    )
  })

  it("send the whole set while the last one is not acknowledged, and to proxyless clients", () => {
    const cache = makeResourceCache(codec)
    const first = sotwResponse(makePushContext(base, undefined, "1"), cache, endpoints, "n1", sidecar)
    const unacked = { ...endpoints, digestSent: first.digest, versionSent: "1" }
    const hosts = new Set([ECHO])
    expect(
      sotwResponse(makePushContext(moved, undefined, "2"), cache, unacked, "n2", sidecar, true, hosts).response
        .resources,
    ).toHaveLength(2)
    const grpc = proxyInfo({
      id: "sidecar~10.1.0.2~g.default~default.svc.cluster.local",
      metadata: plainToStruct({ GENERATOR: "grpc" }),
    })
    const acked = { ...unacked, versionAcked: "1" }
    expect(
      sotwResponse(makePushContext(moved, undefined, "2"), cache, acked, "n2", grpc, true, hosts).response.resources,
    ).toHaveLength(2)
  })
})

describe("route pushes to a data-plane proxy after a DestinationRule change", () => {
  const sidecar = proxyInfo({
    id: "sidecar~10.1.0.1~app-1.default~default.svc.cluster.local",
    metadata: plainToStruct({ NAMESPACE: "default" }),
  })
  const routes = { typeUrl: TypeUrl.Route, names: ["80"], wildcard: false }
  const routing = (trafficPolicy: unknown) =>
    input({
      ...base,
      virtualServices: [
        virtualService("echo", { hosts: ["echo"], http: [{ route: [{ destination: { host: "other" } }] }] }),
      ],
      destinationRules: [destinationRule("other", { host: OTHER, trafficPolicy })],
    })
  const hashOn = (header: string) => ({ loadBalancer: { consistentHash: { httpHeaderName: header } } })
  const hashPolicies = (response: { resources: ReadonlyArray<{ value: Uint8Array }> }) =>
    JSON.stringify(response.resources.map((r) => codec.decode(TypeUrl.Route, r.value))).match(/"header_name":"[^"]*"/g)

  it("a hash key change gives the proxy a new route set carrying the new key; other rule changes do not", () => {
    const cache = makeResourceCache(codec)
    const first = sotwResponse(makePushContext(routing(hashOn("x-a")), undefined, "1"), cache, routes, "n1", sidecar)
    // echo's route to other, and other's own (default) route.
    expect(hashPolicies(first.response)).toEqual(['"header_name":"x-a"', '"header_name":"x-a"'])
    const held = { ...routes, digestSent: first.digest, versionSent: "1", versionAcked: "1" }
    const rehashed = sotwResponse(makePushContext(routing(hashOn("x-b")), undefined, "2"), cache, held, "n2", sidecar)
    expect(rehashed.digest).not.toBe(first.digest)
    expect(hashPolicies(rehashed.response)).toEqual(['"header_name":"x-b"', '"header_name":"x-b"'])
    // Outlier detection shapes the cluster, not the route: the same set (the push sends nothing new).
    const outliers = { ...hashOn("x-a"), outlierDetection: { consecutive5xxErrors: 3 } }
    const same = sotwResponse(makePushContext(routing(outliers), undefined, "3"), cache, held, "n3", sidecar)
    expect(same.digest).toBe(first.digest)
  })
})

describe("what a push keeps of the names callers watch", () => {
  it("a set naming what does not exist is not kept for others; its reasons are bounded", () => {
    const push = makePushContext(base, undefined, "1")
    const cache = makeResourceCache(codec)
    const missing = Array.from({ length: MAX_NOT_FOUND + 20 }, (_, i) =>
      clusterName(`gone-${i}.default.svc.cluster.local`, 80),
    )
    const watch = { typeUrl: TypeUrl.Cluster, names: [...names, ...missing].sort(), wildcard: false }
    const first = sotwResponse(push, cache, watch, "n1")
    expect(first.response.resources).toHaveLength(names.length)
    expect(first.notFound).toHaveLength(MAX_NOT_FOUND + 1)
    expect(first.notFound[MAX_NOT_FOUND]).toBe("20 more requested cds resources not found")
    // Another connection watching the same names resolves them itself: nothing was kept.
    expect(sotwResponse(push, cache, { ...watch, names: [...watch.names] }, "n2").sharedReads).toBe(0)
    // Sets of existing names are shared as before.
    expect(sotwResponse(push, cache, clusters, "n3").sharedReads).toBe(0)
    expect(sotwResponse(push, cache, { ...clusters, names: [...names] }, "n4").sharedReads).toBe(names.length)
  })
})
