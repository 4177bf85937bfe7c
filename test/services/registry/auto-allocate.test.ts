import { describe, expect, it } from "vitest"
import {
  AUTO_ALLOCATE_SLOTS,
  allocateSlots,
  fnv1a32,
  slotAddresses,
} from "../../../src/services/registry/auto-allocate.js"
import { convertServiceEntries } from "../../../src/services/registry/service-entry.js"
import { serviceEntry } from "./fixtures.js"

describe("auto-allocation", () => {
  it("FNV-1a 32 matches known vectors", () => {
    expect(fnv1a32("")).toBe(0x811c9dc5)
    expect(fnv1a32("a")).toBe(0xe40c292c)
    expect(fnv1a32("foobar")).toBe(0xbf9cf968)
  })

  it("maps slots into 240.240.0.0/16 and 2001:2::/48 without .0 or .255", () => {
    expect(slotAddresses(0)).toEqual({ ipv4: "240.240.0.1", ipv6: "2001:2::f0f0:1" })
    expect(slotAddresses(253)).toEqual({ ipv4: "240.240.0.254", ipv6: "2001:2::f0f0:fe" })
    expect(slotAddresses(254)).toEqual({ ipv4: "240.240.1.1", ipv6: "2001:2::f0f0:101" })
    expect(slotAddresses(AUTO_ALLOCATE_SLOTS - 1).ipv4).toBe("240.240.255.254")
  })

  it("is deterministic whatever the input order", () => {
    const keys = Array.from({ length: 500 }, (_, i) => `ns${i % 7}/host${i}.example.com`)
    const a = allocateSlots(keys)
    const b = allocateSlots([...keys].reverse())
    expect([...a.slots.entries()].sort()).toEqual([...b.slots.entries()].sort())
  })

  it("never gives two keys the same address, even when hashes collide", () => {
    const keys = Array.from({ length: 20_000 }, (_, i) => `ns/h${i}`)
    const { slots, exhausted } = allocateSlots(keys)
    expect(exhausted).toEqual([])
    expect(new Set(slots.values()).size).toBe(keys.length)
    const v4 = new Set([...slots.values()].map((s) => slotAddresses(s).ipv4))
    const v6 = new Set([...slots.values()].map((s) => slotAddresses(s).ipv6))
    expect(v4.size).toBe(keys.length)
    expect(v6.size).toBe(keys.length)
  })

  it("keeps existing addresses stable when other keys come and go", () => {
    const first = allocateSlots(["ns/a", "ns/b", "ns/c"])
    const second = allocateSlots(["ns/0", "ns/b", "ns/c", "ns/d"], first)
    expect(second.slots.get("ns/b")).toBe(first.slots.get("ns/b"))
    expect(second.slots.get("ns/c")).toBe(first.slots.get("ns/c"))
  })

  it("reports keys left over when the range is exhausted", () => {
    const keys = Array.from({ length: AUTO_ALLOCATE_SLOTS + 3 }, (_, i) => `n/${i}`)
    const { slots, exhausted } = allocateSlots(keys)
    expect(slots.size).toBe(AUTO_ALLOCATE_SLOTS)
    expect(exhausted).toHaveLength(3)
  })

  it("same host in two namespaces gets two addresses; one key is stable across conversions", () => {
    const entries = [
      serviceEntry("a", { hosts: ["x.com"], resolution: "DNS" }, { namespace: "one" }),
      serviceEntry("a", { hosts: ["x.com"], resolution: "DNS" }, { namespace: "two" }),
    ]
    const first = convertServiceEntries(entries, [])
    expect(first.services[0]?.addresses[0]).not.toBe(first.services[1]?.addresses[0])
    const again = convertServiceEntries(entries, [])
    expect(again.services.map((s) => s.addresses)).toEqual(first.services.map((s) => s.addresses))
  })
})
