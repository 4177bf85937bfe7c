/**
 * IP auto-allocation for ServiceEntries without addresses (`PILOT_ENABLE_IP_AUTOALLOCATE`).
 *
 * Addresses come from the class E block 240.240.0.0/16 (never routed) and, for IPv6, from the
 * benchmarking block 2001:2::/48 (RFC 5180), as the reference does. Each `namespace/hostname`
 * key hashes (32-bit FNV-1a) to a slot; a taken slot probes the next one, so every key gets a
 * distinct address. Keys are placed in sorted order, so the same set of keys always yields the
 * same addresses; keys that already hold a slot keep it when others come and go.
 *
 * Slot s maps to 240.240.(s / 254).(s % 254 + 1): the last octet is never 0 or 255.
 */

/** Number of distinct addresses: third octet 0-255, fourth octet 1-254. */
export const AUTO_ALLOCATE_SLOTS = 256 * 254

const FNV_OFFSET = 0x811c9dc5
const FNV_PRIME = 0x01000193

/** 32-bit FNV-1a of the UTF-8 bytes of a string. */
export const fnv1a32 = (text: string): number => {
  let hash = FNV_OFFSET
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte
    hash = Math.imul(hash, FNV_PRIME) >>> 0
  }
  return hash >>> 0
}

export interface AllocatedAddresses {
  readonly ipv4: string
  readonly ipv6: string
}

/** The addresses of one slot. */
export const slotAddresses = (slot: number): AllocatedAddresses => {
  const third = Math.floor(slot / 254)
  const fourth = (slot % 254) + 1
  return {
    ipv4: `240.240.${third}.${fourth}`,
    ipv6: `2001:2::f0f0:${(third * 256 + fourth).toString(16)}`,
  }
}

export interface Allocation {
  /** key → slot. */
  readonly slots: ReadonlyMap<string, number>
  /** Keys left without an address because every slot is taken. */
  readonly exhausted: ReadonlyArray<string>
}

export const emptyAllocation: Allocation = { slots: new Map(), exhausted: [] }

/**
 * Allocates one slot per key (`namespace/hostname`). `previous` is the last allocation: its
 * keys that are still wanted keep their slots.
 */
export const allocateSlots = (keys: Iterable<string>, previous: Allocation = emptyAllocation): Allocation => {
  const wanted = [...new Set(keys)].sort()
  const slots = new Map<string, number>()
  // nextFree[s]: a slot at or after s (cyclically) that may be free; path-compressed, so probing
  // stays cheap even when the range is nearly full.
  const nextFree = new Map<number, number>()
  const find = (start: number): number => {
    let s = start
    const path: Array<number> = []
    for (let next = nextFree.get(s); next !== undefined; next = nextFree.get(s)) {
      path.push(s)
      s = next
    }
    for (const p of path) nextFree.set(p, s)
    return s
  }
  const take = (slot: number) => nextFree.set(slot, (slot + 1) % AUTO_ALLOCATE_SLOTS)
  for (const key of wanted) {
    const slot = previous.slots.get(key)
    if (slot !== undefined && !nextFree.has(slot)) {
      slots.set(key, slot)
      take(slot)
    }
  }
  const exhausted: Array<string> = []
  for (const key of wanted) {
    if (slots.has(key)) continue
    if (slots.size >= AUTO_ALLOCATE_SLOTS) {
      exhausted.push(key)
      continue
    }
    const slot = find(fnv1a32(key) % AUTO_ALLOCATE_SLOTS)
    slots.set(key, slot)
    take(slot)
  }
  return { slots, exhausted }
}
