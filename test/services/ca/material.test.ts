import { describe, expect, it } from "@effect/vitest"
import { read } from "../../../src/services/ca/der.js"
import { serialInteger } from "../../../src/services/ca/material.js"

describe("leaf serial numbers", () => {
  it("are positive 128-bit DER INTEGERs of a fixed size, never repeated", () => {
    const seen = new Set<string>()
    // More than one batch of pooled randomness.
    for (let i = 0; i < 1000; i++) {
      const serial = serialInteger()
      expect(serial).toHaveLength(18)
      const node = read(serial, 0)
      expect([node.tag, node.end - node.start]).toEqual([0x02, 16])
      // Minimal and positive: no leading zero byte, top bit clear.
      expect(serial[2]).toBeGreaterThan(0)
      expect(serial[2]).toBeLessThan(0x80)
      seen.add(serial.toString("hex"))
    }
    expect(seen.size).toBe(1000)
  })
})
