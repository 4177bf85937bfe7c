import { describe, expect, it } from "@effect/vitest"
import { parseGeneralNames } from "../../../src/services/ca/csr.js"
import { children, decodeOid, oid, read, seq, time, tlv, unsignedInteger } from "../../../src/services/ca/der.js"
import { x509 } from "../../../src/services/ca/x509.js"

describe("DER helpers", () => {
  it("encodes and decodes OIDs", () => {
    for (const id of ["2.5.29.17", "1.2.840.113549.1.1.11", "1.3.6.1.5.5.7.3.2"]) {
      const der = oid(id)
      const node = read(der, 0)
      expect(decodeOid(der.subarray(node.start, node.end))).toBe(id)
    }
  })

  it("uses UTCTime before 2050 and GeneralizedTime from 2050 (RFC 5280)", () => {
    expect(time(new Date(Date.UTC(2049, 11, 31, 23, 59, 59))).toString("latin1")).toBe("\x17\x0d491231235959Z")
    expect(time(new Date(Date.UTC(2050, 0, 1))).toString("latin1")).toBe("\x18\x0f20500101000000Z")
  })

  it("keeps INTEGERs positive and minimal", () => {
    expect(unsignedInteger(Buffer.from([0x00, 0x00, 0x7f]))).toEqual(Buffer.from([0x02, 0x01, 0x7f]))
    expect(unsignedInteger(Buffer.from([0x80]))).toEqual(Buffer.from([0x02, 0x02, 0x00, 0x80]))
  })

  it("reads long lengths and walks children", () => {
    const big = Buffer.concat([Buffer.from([0x30, 0x82, 0x01, 0x00]), Buffer.alloc(256, 0x05)])
    // 256 bytes of content made of 128 NULLs (05 05 would be invalid length; use 05 00 pairs)
    for (let i = 4; i < big.length; i += 2) big[i + 1] = 0
    expect(children(big, read(big, 0))).toHaveLength(128)
    expect(() => read(Buffer.from([0x30, 0x05, 0x00]), 0)).toThrow(/exceeds/)
  })

  it("writes short and long definite lengths, concatenating the parts", () => {
    expect(tlv(0x04, Buffer.from([1, 2]), Buffer.from([3]))).toEqual(Buffer.from([0x04, 0x03, 1, 2, 3]))
    expect(seq()).toEqual(Buffer.from([0x30, 0x00]))
    for (const [size, header] of [
      [127, [0x04, 0x7f]],
      [128, [0x04, 0x81, 0x80]],
      [255, [0x04, 0x81, 0xff]],
      [256, [0x04, 0x82, 0x01, 0x00]],
      [70_000, [0x04, 0x83, 0x01, 0x11, 0x70]],
    ] as const) {
      const encoded = tlv(0x04, Buffer.alloc(size - 1, 7), Buffer.from([9]))
      expect([...encoded.subarray(0, header.length)]).toEqual(header)
      const node = read(encoded, 0)
      expect([node.end - node.start, node.end]).toEqual([size, encoded.length])
      expect(encoded[encoded.length - 1]).toBe(9)
    }
  })

  it("parses URI, DNS, IP and email SANs", () => {
    const ext = new x509.SubjectAlternativeNameExtension([
      { type: "url", value: "spiffe://td/ns/a/sa/b" },
      { type: "dns", value: "a.example" },
      { type: "ip", value: "10.0.0.1" },
      { type: "ip", value: "2001:db8::1" },
      { type: "email", value: "a@example.test" },
    ])
    const sans = parseGeneralNames(Buffer.from(ext.value))
    expect(sans).toEqual({
      uris: ["spiffe://td/ns/a/sa/b"],
      dnsNames: ["a.example"],
      ips: ["10.0.0.1", "2001:db8:0:0:0:0:0:1"],
      emails: ["a@example.test"],
    })
  })
})
