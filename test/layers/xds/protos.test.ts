import * as protoLoader from "@grpc/proto-loader"
import { describe, expect, it } from "vitest"
import { loadXdsProtos, xdsProtoFiles, xdsProtoLoaderOptions } from "../../../src/layers/xds/protos.js"
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
