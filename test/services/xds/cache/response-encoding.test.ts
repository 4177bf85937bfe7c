import * as protoLoader from "@grpc/proto-loader"
import { describe, expect, it } from "vitest"
import { xdsProtoLoaderOptions } from "../../../../src/layers/xds/protos.js"
import { sharingResourceEncoding } from "../../../../src/services/xds/cache/response-encoding.js"
import { TypeUrl } from "../../../../src/services/xds/protocol/type-urls.js"

type Method = protoLoader.MethodDefinition<object, object>
// The ADS methods as proto-loader makes them, without the sharing the served definition adds.
const ads = protoLoader.loadSync("envoy/service/discovery/v3/ads.proto", xdsProtoLoaderOptions())[
  "envoy.service.discovery.v3.AggregatedDiscoveryService"
] as unknown as Record<string, Method>
const sotw = ads.StreamAggregatedResources!
const delta = ads.DeltaAggregatedResources!

const cluster = (i: number) => ({ type_url: TypeUrl.Cluster, value: Buffer.from(`cluster-${i}-${"x".repeat(i * 70)}`) })

describe("sharing resource encoding", () => {
  it("a SotW response decodes to the same message as one encoded whole", () => {
    const { serialize } = sharingResourceEncoding(sotw.responseSerialize)
    const message = { version_info: "v7", type_url: TypeUrl.Cluster, nonce: "n1", resources: [1, 2, 3].map(cluster) }
    expect(sotw.responseDeserialize(serialize(message))).toEqual(
      sotw.responseDeserialize(sotw.responseSerialize(message)),
    )
    const empty = { ...message, resources: [] }
    expect(serialize(empty).equals(sotw.responseSerialize(empty))).toBe(true)
  })

  it("a delta response with removals decodes to the same message as one encoded whole", () => {
    const { serialize } = sharingResourceEncoding(delta.responseSerialize)
    const message = {
      system_version_info: "v2",
      type_url: TypeUrl.Endpoint,
      nonce: "n2",
      resources: [
        { name: "c1", version: "d1", resource: cluster(4) },
        { name: "c2", version: "d2", resource: cluster(5) },
      ],
      removed_resources: ["c0"],
    }
    expect(delta.responseDeserialize(serialize(message))).toEqual(
      delta.responseDeserialize(delta.responseSerialize(message)),
    )
  })

  it("sizes a response without serializing it, within a small bound of its real size", () => {
    const { serialize, size } = sharingResourceEncoding(sotw.responseSerialize)
    const message = { version_info: "v9", type_url: TypeUrl.Cluster, nonce: "n9", resources: [10, 20, 30].map(cluster) }
    const estimate = size(message)
    const actual = sotw.responseSerialize(message).length
    expect(estimate).toBeGreaterThanOrEqual(actual)
    expect(estimate - actual).toBeLessThanOrEqual(256)
    // Once serialized, the size is exact.
    expect(size(message)).toBe(estimate)
    expect(size(message) >= serialize(message).length).toBe(true)
    expect(size(message)).toBe(serialize(message).length)
    expect(size({ type_url: TypeUrl.Cluster, resources: [] })).toBeGreaterThan(0)
  })

  it("encodes a response object once however many streams it is written to", () => {
    let calls = 0
    const { serialize } = sharingResourceEncoding((message: object) => {
      calls++
      return sotw.responseSerialize(message)
    })
    const message = { version_info: "v1", type_url: TypeUrl.Cluster, nonce: "shared", resources: [cluster(1)] }
    const first = serialize(message)
    const encoded = calls
    expect(serialize(message)).toBe(first)
    expect(calls).toBe(encoded)
    // an equal but distinct object is encoded again (to equal bytes)
    expect(serialize({ ...message }).equals(first)).toBe(true)
  })

  it("resources encoded ahead are not encoded again by the responses that carry them", () => {
    let calls = 0
    const { serialize, encodeAhead } = sharingResourceEncoding((message: object) => {
      calls++
      return sotw.responseSerialize(message)
    })
    const resources = [cluster(1), cluster(2)]
    encodeAhead(resources)
    expect(calls).toBe(2)
    const message = { version_info: "v1", type_url: TypeUrl.Cluster, nonce: "a", resources }
    const bytes = serialize(message)
    expect(calls).toBe(3) // only the response's own fields
    expect(sotw.responseDeserialize(bytes)).toEqual(sotw.responseDeserialize(sotw.responseSerialize(message)))
    encodeAhead(resources)
    expect(calls).toBe(3)
  })

  it("encodes each resource once, and a shared resources array once, however many responses carry it", () => {
    let calls = 0
    const { serialize } = sharingResourceEncoding((message: object) => {
      calls++
      return sotw.responseSerialize(message)
    })
    const shared = [cluster(1), cluster(2)]
    const first = serialize({ version_info: "v1", type_url: TypeUrl.Cluster, nonce: "a", resources: shared })
    expect(calls).toBe(3) // each resource, then the response's own fields
    for (const nonce of ["b", "c", "d"])
      serialize({ version_info: "v1", type_url: TypeUrl.Cluster, nonce, resources: shared })
    expect(calls).toBe(3) // the same version and type: only each nonce is written, by hand
    // another array holding the same resources reuses their encodings, and the same fields too
    const again = serialize({ version_info: "v1", type_url: TypeUrl.Cluster, nonce: "a", resources: [...shared] })
    expect(calls).toBe(3)
    expect(again.equals(first)).toBe(true)
    // a new version is encoded once
    serialize({ version_info: "v2", type_url: TypeUrl.Cluster, nonce: "e", resources: shared })
    serialize({ version_info: "v2", type_url: TypeUrl.Cluster, nonce: "f", resources: [...shared] })
    expect(calls).toBe(4)
    // another type keeps its own fields: going back to the first type encodes nothing new
    serialize({ version_info: "v2", type_url: TypeUrl.Endpoint, nonce: "g", resources: shared })
    expect(calls).toBe(5)
    serialize({ version_info: "v2", type_url: TypeUrl.Cluster, nonce: "h", resources: shared })
    expect(calls).toBe(5)
  })

  it("nonces of any length and text, and removals that differ per response, decode as encoded whole", () => {
    const { serialize } = sharingResourceEncoding(delta.responseSerialize)
    const resources = [{ name: "c1", version: "d1", resource: cluster(1) }]
    for (const [nonce, removed] of [
      ["x".repeat(127), []],
      ["y".repeat(128), ["c0"]],
      [`ñ-${"z".repeat(300)}`, ["c9", "c8"]],
      ["n", []],
    ] as const) {
      const message = {
        system_version_info: "v",
        type_url: TypeUrl.Endpoint,
        nonce,
        resources,
        removed_resources: removed,
      }
      expect(delta.responseDeserialize(serialize(message))).toEqual(
        delta.responseDeserialize(delta.responseSerialize(message)),
      )
      // the same fields, each once: no empty nonce left in the shared part
      expect(serialize(message).length).toBe(delta.responseSerialize(message).length)
    }
  })
})
