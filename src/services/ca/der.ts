/**
 * Minimal DER reading and writing for the CA's hot path: parsing PKCS#10 requests and encoding
 * workload certificates without an ASN.1 object model, so that issuance costs little more than
 * the signature itself. Only the structures the CA needs are handled.
 */

export interface Node {
  readonly tag: number
  /** Offset of the tag byte. */
  readonly offset: number
  /** Offset of the content. */
  readonly start: number
  /** Offset after the content. */
  readonly end: number
}

export class DerError extends Error {}

export const read = (buf: Uint8Array, offset: number, limit = buf.length): Node => {
  if (offset + 2 > limit) throw new DerError("truncated DER")
  const tag = buf[offset]!
  if ((tag & 0x1f) === 0x1f) throw new DerError("multi-byte DER tags are not supported")
  let len = buf[offset + 1]!
  let start = offset + 2
  if (len & 0x80) {
    const n = len & 0x7f
    if (n === 0 || n > 4 || start + n > limit) throw new DerError("invalid DER length")
    len = 0
    for (let i = 0; i < n; i++) len = len * 256 + buf[start + i]!
    start += n
  }
  const end = start + len
  if (end > limit) throw new DerError("DER length exceeds the data")
  return { tag, offset, start, end }
}

export const children = (buf: Uint8Array, node: Node): Array<Node> => {
  const out: Array<Node> = []
  let at = node.start
  while (at < node.end) {
    const child = read(buf, at, node.end)
    out.push(child)
    at = child.end
  }
  return out
}

export const raw = (buf: Uint8Array, node: Node): Buffer =>
  Buffer.from(buf.buffer, buf.byteOffset + node.offset, node.end - node.offset)
export const content = (buf: Uint8Array, node: Node): Buffer =>
  Buffer.from(buf.buffer, buf.byteOffset + node.start, node.end - node.start)

export const decodeOid = (bytes: Uint8Array): string => {
  if (bytes.length === 0) throw new DerError("empty OID")
  const parts: Array<number> = []
  const first = bytes[0]!
  parts.push(first < 80 ? Math.floor(first / 40) : 2, first < 80 ? first % 40 : first - 80)
  let value = 0
  for (let i = 1; i < bytes.length; i++) {
    value = value * 128 + (bytes[i]! & 0x7f)
    if (!(bytes[i]! & 0x80)) {
      parts.push(value)
      value = 0
    }
  }
  return parts.join(".")
}

// --- writing ---

const headerLength = (n: number): number => (n < 0x80 ? 2 : n < 0x100 ? 3 : n < 0x10000 ? 4 : n < 0x1000000 ? 5 : 6)

/** Writes tag and definite length at `at`; returns the offset of the content. */
const writeHeader = (out: Buffer, at: number, tag: number, n: number): number => {
  out[at++] = tag
  if (n < 0x80) {
    out[at++] = n
    return at
  }
  const bytes = headerLength(n) - 2
  out[at++] = 0x80 | bytes
  for (let i = bytes - 1; i >= 0; i--) out[at++] = Math.floor(n / 256 ** i) & 0xff
  return at
}

// One allocation per value: issuance builds dozens of these per certificate.
export const tlv = (tag: number, ...parts: ReadonlyArray<Uint8Array>): Buffer => {
  let n = 0
  for (const part of parts) n += part.length
  const out = Buffer.allocUnsafe(headerLength(n) + n)
  let at = writeHeader(out, 0, tag, n)
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

export const seq = (...parts: ReadonlyArray<Uint8Array>) => tlv(0x30, ...parts)
export const octets = (bytes: Uint8Array) => tlv(0x04, bytes)
export const bitString = (bytes: Uint8Array) => tlv(0x03, Buffer.from([0]), bytes)
export const boolTrue = Buffer.from([0x01, 0x01, 0xff])
export const derNull = Buffer.from([0x05, 0x00])

/** A non-negative INTEGER from big-endian bytes. */
export const unsignedInteger = (bytes: Uint8Array): Buffer => {
  let i = 0
  while (i < bytes.length - 1 && bytes[i] === 0) i++
  const trimmed = Buffer.from(bytes.subarray(i))
  return tlv(0x02, trimmed[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed)
}

export const smallInteger = (n: number) => tlv(0x02, Buffer.from([n]))

// Shared by every CA in the process: a pure memo of constant OIDs (callers pass literals only).
const oidCache = new Map<string, Buffer>()
export const oid = (dotted: string): Buffer => {
  const cached = oidCache.get(dotted)
  if (cached !== undefined) return cached
  const parts = dotted.split(".").map(Number)
  const bytes: Array<number> = [parts[0]! * 40 + parts[1]!]
  for (const part of parts.slice(2)) {
    const chunk: Array<number> = []
    let v = part
    do {
      chunk.unshift(v & 0x7f)
      v = Math.floor(v / 128)
    } while (v > 0)
    for (let i = 0; i < chunk.length - 1; i++) chunk[i]! |= 0x80
    bytes.push(...chunk)
  }
  const encoded = tlv(0x06, Buffer.from(bytes))
  oidCache.set(dotted, encoded)
  return encoded
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0")

/** UTCTime before 2050, GeneralizedTime from 2050 (RFC 5280 §4.1.2.5). */
export const time = (date: Date): Buffer => {
  const y = date.getUTCFullYear()
  const rest = `${pad(date.getUTCMonth() + 1)}${pad(date.getUTCDate())}${pad(date.getUTCHours())}${pad(date.getUTCMinutes())}${pad(date.getUTCSeconds())}Z`
  return y < 2050 && y >= 1950
    ? tlv(0x17, Buffer.from(`${pad(y % 100)}${rest}`, "ascii"))
    : tlv(0x18, Buffer.from(`${pad(y, 4)}${rest}`, "ascii"))
}

export const toPemBlock = (label: string, der: Uint8Array): string => {
  const b64 = Buffer.from(der).toString("base64")
  const lines: Array<string> = []
  for (let i = 0; i < b64.length; i += 64) lines.push(b64.slice(i, i + 64))
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`
}

export const fromPemBlock = (pem: string, label: string): Buffer | undefined => {
  const begin = `-----BEGIN ${label}-----`
  const at = pem.indexOf(begin)
  if (at === -1) return undefined
  const stop = pem.indexOf(`-----END ${label}-----`, at)
  if (stop === -1) return undefined
  return Buffer.from(pem.slice(at + begin.length, stop).replace(/\s+/g, ""), "base64")
}
