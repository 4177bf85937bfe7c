/**
 * Addresses a Wasm pull may refuse to connect to (WASM_REFUSE_METADATA_ADDRESSES): link-local
 * ranges, where cloud instance metadata services answer (169.254.169.254 hands out credentials),
 * and the metadata addresses outside them. A module URL comes from a WasmPlugin, so whoever can
 * write one could otherwise make every matching agent fetch its node's credentials.
 *
 * The reference always refuses link-local and these metadata addresses; here the check is a
 * setting (off by default) because module servers on link-local addresses exist in test
 * set-ups. IPv4-mapped IPv6 (`::ffff:169.254.169.254`, `::ffff:a9fe:a9fe`) is matched against the
 * IPv4 ranges, and the NAT64 well-known prefix (`64:ff9b::/96`) embedding them is refused too.
 * Private and loopback ranges are not refused: in-cluster registries legitimately live there.
 */
import { BlockList, isIP } from "node:net"

interface Range {
  readonly address: string
  readonly prefix: number
  readonly family: "ipv4" | "ipv6"
  readonly what: string
}

export const REFUSED_RANGES: ReadonlyArray<Range> = [
  { address: "169.254.0.0", prefix: 16, family: "ipv4", what: "link-local (cloud metadata)" },
  { address: "fe80::", prefix: 10, family: "ipv6", what: "link-local" },
  { address: "fd00:ec2::", prefix: 32, family: "ipv6", what: "a cloud metadata address (AWS IPv6)" },
  { address: "100.100.100.200", prefix: 32, family: "ipv4", what: "a cloud metadata address (Alibaba)" },
  { address: "64:ff9b::a9fe:0", prefix: 112, family: "ipv6", what: "link-local through NAT64" },
  { address: "64:ff9b::6464:64c8", prefix: 128, family: "ipv6", what: "a cloud metadata address through NAT64" },
]

/** A checker of dialled addresses: the reason an address is refused, or undefined. */
export type AddressPolicy = (address: string) => string | undefined

/** Refuses the ranges above; the list is built per policy (no module-level state). */
export const refuseMetadataAddresses = (): AddressPolicy => {
  const lists = REFUSED_RANGES.map((range) => {
    const list = new BlockList()
    list.addSubnet(range.address, range.prefix, range.family)
    return { list, range }
  })
  return (address) => {
    const bare = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address
    const family = isIP(bare)
    if (family === 0) return undefined
    const hit = lists.find(({ list }) => list.check(bare, family === 4 ? "ipv4" : "ipv6"))
    return hit === undefined
      ? undefined
      : `address ${bare} is ${hit.range.what} (${hit.range.address}/${hit.range.prefix}), refused by WASM_REFUSE_METADATA_ADDRESSES`
  }
}
