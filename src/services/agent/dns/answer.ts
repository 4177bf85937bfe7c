/**
 * From a query packet to what the proxy does with it, as the reference's handler decides:
 * - no question: SERVFAIL;
 * - the first question's name is in the table: an authoritative answer from it (TTL 30 s,
 *   addresses rotated per query so that clients spread over them);
 * - otherwise (or before the first table arrives): forward the query unchanged upstream.
 * Every reply fits its transport: over UDP 512 bytes or the client's EDNS size, whichever is
 * larger, over TCP 65535; what does not fit is cut and marked truncated (TC), so that the client
 * asks again over TCP.
 */
import dnsPacket, { type DecodedPacket, type DnsPacket, type DnsRecord } from "dns-packet"
import { type LookupTable, lookup, type TableRecord } from "./lookup-table.js"

export type Transport = "udp" | "tcp"

/** Classic DNS over UDP without EDNS. */
export const UDP_MIN_SIZE = 512
export const TCP_MAX_SIZE = 65535

const OPCODE_MASK = 0xf << 11
const RCODE_MASK = 0xf
export const Rcode = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const

export type Decision =
  /** Answered from the table (`name` is the question's). */
  | { readonly _tag: "Answer"; readonly name: string; readonly response: Buffer }
  /** Not the mesh's: forward `query` upstream, cut the reply to `limit` bytes. */
  | { readonly _tag: "Forward"; readonly name: string; readonly query: DecodedPacket; readonly limit: number }
  /** A reply without asking anyone (no question). */
  | { readonly _tag: "Reply"; readonly response: Buffer }
  /** Not a DNS query at all: nothing to answer. */
  | { readonly _tag: "Drop"; readonly reason: string }

/** The largest reply the client accepts over `transport`. */
export const sizeLimit = (query: DnsPacket, transport: Transport): number => {
  if (transport === "tcp") return TCP_MAX_SIZE
  const opt = query.additionals?.find((r) => r.type === "OPT")
  return Math.max(UDP_MIN_SIZE, opt?.udpPayloadSize ?? 0)
}

/** The reply's header bits: the query's opcode, RD and CD echoed, RA set (the proxy recurses). */
const replyFlags = (query: DnsPacket, extra: number): number =>
  ((query.flags ?? 0) & (OPCODE_MASK | dnsPacket.RECURSION_DESIRED | dnsPacket.CHECKING_DISABLED)) |
  dnsPacket.RECURSION_AVAILABLE |
  extra

/** A reply with `rcode` and no records (for a query that could not be answered). */
export const failureReply = (query: DnsPacket, rcode: number): Buffer =>
  dnsPacket.encode({
    id: query.id ?? 0,
    type: "response",
    flags: replyFlags(query, rcode & RCODE_MASK),
    questions: (query.questions ?? []).slice(0, 1),
  })

/**
 * Encodes `packet` within `limit` bytes: records that do not fit are left out, answers last
 * (the EDNS OPT record is kept), and TC is set when anything was left out.
 */
export const encodeWithin = (packet: DnsPacket, limit: number): Buffer => {
  if (dnsPacket.encodingLength(packet) <= limit) return dnsPacket.encode(packet)
  const opt = (packet.additionals ?? []).filter((r) => r.type === "OPT")
  const kept: DnsPacket = { ...packet, answers: [], authorities: [], additionals: opt }
  let size = dnsPacket.encodingLength(kept)
  for (const section of ["answers", "authorities", "additionals"] as const) {
    for (const record of packet[section] ?? []) {
      if (section === "additionals" && record.type === "OPT") continue
      const length = dnsPacket.answer.encodingLength(record)
      if (size + length > limit) {
        return dnsPacket.encode({ ...kept, flags: (kept.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE })
      }
      kept[section]!.push(record)
      size += length
    }
  }
  return dnsPacket.encode(kept)
}

/**
 * An upstream reply cut to `limit` (a server may answer over UDP with more than the client can
 * take). A reply that cannot be decoded but is too long keeps only its header, marked truncated.
 */
export const fitReply = (reply: Buffer, limit: number): Buffer => {
  if (reply.length <= limit) return reply
  try {
    return encodeWithin(dnsPacket.decode(reply), limit)
  } catch {
    const header = Buffer.alloc(12)
    reply.copy(header, 0, 0, 12)
    header.writeUInt16BE(header.readUInt16BE(2) | dnsPacket.TRUNCATED_RESPONSE, 2)
    header.fill(0, 4)
    return header
  }
}

/** `records` with the address records rotated by `rotation` (a CNAME stays first). */
const rotate = (records: ReadonlyArray<TableRecord>, rotation: number): ReadonlyArray<TableRecord> => {
  const lead = records[0]?.type === "CNAME" ? 1 : 0
  const addresses = records.length - lead
  if (addresses < 2) return records
  const shift = rotation % addresses
  return [...records.slice(0, lead), ...records.slice(lead + shift), ...records.slice(lead, lead + shift)]
}

const toRecord = (r: TableRecord): DnsRecord => ({ name: r.name, type: r.type, class: "IN", ttl: r.ttl, data: r.data })

const QTYPES: Readonly<Record<number, string>> = { 1: "A", 28: "AAAA", 5: "CNAME" }

/**
 * The first question of a query packet (name without the root dot, as `dns-packet` reads it, and
 * type), read straight from the bytes without decoding the packet: the proxy's cheap look at a
 * query it may drop unanswered (a flood must not cost a full decode per packet). Undefined when
 * the packet is not a query with a plain question (the full decode then decides).
 */
export const peekQuestion = (bytes: Buffer): { readonly name: string; readonly type: string } | undefined => {
  if (bytes.length < 12 || (bytes[2]! & 0x80) !== 0 || bytes.readUInt16BE(4) === 0) return undefined
  const labels: Array<string> = []
  let at = 12
  for (;;) {
    const length = bytes[at]
    if (length === undefined || length > 63) return undefined
    at++
    if (length === 0) break
    if (at + length > bytes.length) return undefined
    labels.push(bytes.toString("utf8", at, at + length))
    at += length
  }
  if (at + 4 > bytes.length) return undefined
  const code = bytes.readUInt16BE(at)
  return { name: labels.length === 0 ? "." : labels.join("."), type: QTYPES[code] ?? `TYPE${code}` }
}

/** Decodes a query, or the reason it is not one. */
export const decodeQuery = (bytes: Buffer): DecodedPacket | string => {
  try {
    const packet = dnsPacket.decode(bytes)
    return packet.type === "query" ? packet : "not a query"
  } catch (e) {
    return `malformed packet: ${e instanceof Error ? e.message : String(e)}`
  }
}

/**
 * What to do with the query `bytes` that arrived over `transport`, given the latest table
 * (undefined before the first one). `rotation` varies per query to spread clients over addresses.
 */
export const decide = (table: LookupTable | undefined, bytes: Buffer, transport: Transport, rotation = 0): Decision => {
  const query = decodeQuery(bytes)
  if (typeof query === "string") return { _tag: "Drop", reason: query }
  const question = query.questions[0]
  if (question === undefined) return { _tag: "Reply", response: failureReply(query, Rcode.SERVFAIL) }
  const limit = sizeLimit(query, transport)
  const records = table === undefined ? undefined : lookup(table, question.name, question.type)
  if (records === undefined) return { _tag: "Forward", name: question.name, query, limit }
  const response = encodeWithin(
    {
      id: query.id,
      type: "response",
      flags: replyFlags(query, dnsPacket.AUTHORITATIVE_ANSWER),
      questions: [question],
      answers: rotate(records, rotation).map(toRecord),
    },
    limit,
  )
  return { _tag: "Answer", name: question.name, response }
}
