/** Reading a response's type off the wire, against responses the xDS codec really encodes. */
import { describe, expect, it } from "vitest"
import { loadXdsProtos } from "../../../../src/layers/xds/protos.js"
import { responseTypeUrl } from "../../../../src/services/agent/xds-proxy/wire.js"
import { TypeUrl } from "../../../../src/services/xds/protocol/type-urls.js"

const { codec } = loadXdsProtos()
const encode = (message: string, value: Record<string, unknown>) =>
  Buffer.from(codec.encode(`type.googleapis.com/${message}`, value))
const SOTW = "envoy.service.discovery.v3.DiscoveryResponse"
const DELTA = "envoy.service.discovery.v3.DeltaDiscoveryResponse"

describe("responseTypeUrl", () => {
  it("finds the type after the resources, in SotW and delta responses", () => {
    const sotw = encode(SOTW, {
      version_info: "v1",
      resources: [{ "@type": TypeUrl.Cluster, name: "a", connect_timeout: { seconds: "1" } }],
      type_url: TypeUrl.Cluster,
      nonce: "n",
    })
    expect(responseTypeUrl(sotw)).toBe(TypeUrl.Cluster)
    const delta = encode(DELTA, {
      system_version_info: "v",
      resources: [{ name: "t", version: "1", resource: { "@type": TypeUrl.NameTable, table: {} } }],
      type_url: TypeUrl.NameTable,
      nonce: "n",
      removed_resources: ["x"],
    })
    expect(responseTypeUrl(delta)).toBe(TypeUrl.NameTable)
  })

  it("undefined without a type or for bytes that are not a message", () => {
    expect(responseTypeUrl(encode(SOTW, { version_info: "v1" }))).toBeUndefined()
    const truncated = encode(SOTW, { version_info: "v1", type_url: TypeUrl.Listener })
    expect(responseTypeUrl(truncated.subarray(0, truncated.length - 3))).toBeUndefined()
    expect(responseTypeUrl(Buffer.from([0x27, 0x01]))).toBeUndefined()
  })
})
