import { describe, expect, it } from "vitest"
import { loadXdsProtos } from "../../../src/layers/xds/protos.js"
import { TypeUrl } from "../../../src/services/xds/protocol/type-urls.js"
import { resourceNameOf } from "../../../src/services/xds-client/resource-name.js"

const { codec } = loadXdsProtos()

describe("resourceNameOf", () => {
  it("reads the name of each resource type from its encoded bytes", () => {
    const cases: ReadonlyArray<[string, Record<string, unknown>, string]> = [
      [
        TypeUrl.Cluster,
        { name: "outbound|80|v1|svc-0.bench.svc.cluster.local", type: "EDS" },
        "outbound|80|v1|svc-0.bench.svc.cluster.local",
      ],
      [
        TypeUrl.Listener,
        { name: "0.0.0.0_80", address: { socket_address: { address: "0.0.0.0", port_value: 80 } } },
        "0.0.0.0_80",
      ],
      [TypeUrl.Route, { name: "80", virtual_hosts: [{ name: "a", domains: ["*"] }] }, "80"],
      [
        TypeUrl.Endpoint,
        { cluster_name: "outbound|80||svc-1.bench.svc.cluster.local", endpoints: [{ lb_endpoints: [] }] },
        "outbound|80||svc-1.bench.svc.cluster.local",
      ],
    ]
    for (const [typeUrl, resource, name] of cases)
      expect(resourceNameOf(codec.encode(typeUrl, { "@type": typeUrl, ...resource }))).toBe(name)
  })

  it("skips fields written before field 1 and a non-ASCII name survives", () => {
    // field 2 varint 150, field 3 fixed64, field 4 fixed32, field 5 bytes "xy", then field 1 "é/a"
    const name = Buffer.from("é/a")
    const bytes = Uint8Array.from([
      0x10,
      0x96,
      0x01,
      0x19,
      1,
      2,
      3,
      4,
      5,
      6,
      7,
      8,
      0x25,
      1,
      2,
      3,
      4,
      0x2a,
      2,
      0x78,
      0x79,
      0x0a,
      name.length,
      ...name,
    ])
    expect(resourceNameOf(bytes)).toBe("é/a")
  })

  it("gives an empty name when there is none or the bytes are cut", () => {
    expect(resourceNameOf(new Uint8Array())).toBe("")
    expect(resourceNameOf(Uint8Array.from([0x10, 0x01]))).toBe("")
    expect(resourceNameOf(Uint8Array.from([0x0a, 0x05, 0x61]))).toBe("")
    expect(resourceNameOf(Uint8Array.from([0x10, 0x80]))).toBe("")
    expect(resourceNameOf(Uint8Array.from([0x0b]))).toBe("")
  })
})
