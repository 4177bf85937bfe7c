import * as protoLoader from "@grpc/proto-loader"
import protobuf from "protobufjs"
import { describe, expect, it, vi } from "vitest"
import { methodShapesOf } from "../../../src/layers/grpc/proto-methods.js"
import { parseXdsRoot } from "../../../src/layers/xds/proto-root.js"
import {
  ADS_METHODS,
  ADS_SERVICE,
  loadXdsProtos,
  xdsProtoFiles,
  xdsProtoLoaderOptions,
} from "../../../src/layers/xds/protos.js"
import { generate } from "../../../src/services/xds/grpcgen/grpc-gen.js"
import { makePushContext } from "../../../src/services/xds/model/push-context.js"
import { TypeUrl } from "../../../src/services/xds/protocol/type-urls.js"
import { weightedMesh } from "../../fixtures/xds/mesh.js"

// A DiscoveryResponse serializer as proto-loader makes it: the reference encoding of a resource
// is the value of the Any it wraps the resource in.
const sotw = (
  protoLoader.loadSync([...xdsProtoFiles], xdsProtoLoaderOptions())[
    "envoy.service.discovery.v3.AggregatedDiscoveryService"
  ] as unknown as Record<string, protoLoader.MethodDefinition<object, object>>
).StreamAggregatedResources!

describe("xDS codec", () => {
  // First in this file: the process-wide codec is made here, so its first use happens here.
  it("builds no Root until something is encoded or decoded", () => {
    const built = vi.spyOn(protobuf.Root.prototype, "addJSON")
    const parsed = vi.spyOn(protobuf.Root.prototype, "loadSync")
    try {
      const { ads, codec } = loadXdsProtos()
      expect(Object.keys(ads).sort()).toEqual(["DeltaAggregatedResources", "StreamAggregatedResources"])
      expect(built.mock.calls.length + parsed.mock.calls.length).toBe(0)
      expect(codec.encode(TypeUrl.Cluster, { name: "c" }).length).toBeGreaterThan(0)
      expect(built.mock.calls.length + parsed.mock.calls.length).toBeGreaterThan(0)
    } finally {
      built.mockRestore()
      parsed.mockRestore()
    }
  })

  it("the ADS methods written out are the service's in the protos", () => {
    const service = parseXdsRoot(xdsProtoFiles).lookupService(ADS_SERVICE)
    const methods = methodShapesOf(service)
    expect(methods).toEqual(ADS_METHODS)
    const ads = loadXdsProtos().ads as unknown as Record<string, { path: string }>
    expect(ads.StreamAggregatedResources!.path).toBe(
      "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources",
    )
    // proto-loader's definition of the same service agrees on paths and stream flags.
    const reference = protoLoader.loadSync([...xdsProtoFiles], xdsProtoLoaderOptions())[
      ADS_SERVICE
    ] as unknown as Record<string, { path: string; requestStream: boolean; responseStream: boolean }>
    for (const [name, method] of Object.entries(loadXdsProtos().ads as unknown as typeof reference)) {
      expect([method.path, method.requestStream, method.responseStream]).toEqual([
        reference[name]!.path,
        reference[name]!.requestStream,
        reference[name]!.responseStream,
      ])
    }
  })

  it("encodes each resource type with its own serializer, byte for byte as inside an Any", () => {
    const { codec } = loadXdsProtos()
    const push = makePushContext(weightedMesh({ address: "10.0.0.1", port: 8080 }, { address: "10.0.0.2", port: 8080 }))
    let checked = 0
    for (const typeUrl of [TypeUrl.Cluster, TypeUrl.Endpoint, TypeUrl.Listener, TypeUrl.Route]) {
      for (const spec of generate(push, typeUrl, { wildcard: true, names: [] }).resources) {
        const resource = spec.build()
        const bytes = Buffer.from(codec.encode(typeUrl, resource))
        const wrapped = sotw.responseSerialize({ resources: [{ ...resource, "@type": typeUrl }] })
        expect(bytes.length).toBeGreaterThan(0)
        // the Any's value field (2) holds exactly these bytes, at the end of the response
        expect(wrapped.subarray(wrapped.length - bytes.length).equals(bytes)).toBe(true)
        expect(codec.decode(typeUrl, bytes)).toMatchObject({ "@type": typeUrl })
        checked++
      }
    }
    expect(checked).toBeGreaterThanOrEqual(8)
  })
})
