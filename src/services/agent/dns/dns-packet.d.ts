/**
 * The part of `dns-packet` (5.x, plain JavaScript, no published types) the DNS proxy uses.
 * Names are dotless at the end ("a.b.c"), as the library reads and writes them.
 */
declare module "dns-packet" {
  export interface DnsQuestion {
    name: string
    type: string
    class?: string
  }

  /** A resource record; an `OPT` pseudo-record carries the EDNS fields instead of `data`. */
  export interface DnsRecord {
    name: string
    type: string
    class?: string
    ttl?: number
    data?: unknown
    udpPayloadSize?: number
    extendedRcode?: number
    ednsVersion?: number
    flags?: number
    options?: ReadonlyArray<unknown>
  }

  export interface DnsPacket {
    id?: number
    type?: "query" | "response"
    /** Header bits below QR: opcode, AA, TC, RD, RA, Z, AD, CD and the rcode. */
    flags?: number
    questions?: Array<DnsQuestion>
    answers?: Array<DnsRecord>
    authorities?: Array<DnsRecord>
    additionals?: Array<DnsRecord>
  }

  export interface DecodedPacket extends Required<DnsPacket> {
    opcode: string
    rcode: string
    flag_tc: boolean
    flag_rd: boolean
  }

  interface DnsPacketModule {
    encode(packet: DnsPacket): Buffer
    decode(buf: Buffer): DecodedPacket
    encodingLength(packet: DnsPacket): number
    readonly answer: { encodingLength(record: DnsRecord): number }
    readonly AUTHORITATIVE_ANSWER: number
    readonly TRUNCATED_RESPONSE: number
    readonly RECURSION_DESIRED: number
    readonly RECURSION_AVAILABLE: number
    readonly CHECKING_DISABLED: number
  }

  const dnsPacket: DnsPacketModule
  export default dnsPacket
}
