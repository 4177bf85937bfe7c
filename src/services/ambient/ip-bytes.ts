/**
 * Addresses as the workload API carries them: 4 or 16 bytes (and a prefix length for blocks).
 */
import { parseIpv4, parseIpv6 } from "../iptables/config.js"

/** The bytes of an IPv4 or IPv6 address; undefined when `text` is neither. */
export const ipBytes = (text: string): Uint8Array | undefined => {
  const v4 = parseIpv4(text)
  if (v4 !== undefined) return Uint8Array.from(v4)
  const v6 = parseIpv6(text)
  if (v6 === undefined) return undefined
  const out = new Uint8Array(16)
  v6.forEach((group, i) => {
    out[i * 2] = group >> 8
    out[i * 2 + 1] = group & 0xff
  })
  return out
}

/** `ip` or `ip/bits` as bytes and prefix length (a bare address is a full-length block). */
export const ipBlock = (text: string): { readonly address: Uint8Array; readonly length: number } | undefined => {
  const slash = text.indexOf("/")
  const address = ipBytes(slash < 0 ? text : text.slice(0, slash))
  if (address === undefined) return undefined
  if (slash < 0) return { address, length: address.length * 8 }
  const bits = text.slice(slash + 1)
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > address.length * 8) return undefined
  return { address, length: Number(bits) }
}
