/** From a query packet to the proxy's decision: answer, forward, SERVFAIL, drop; size limits and truncation. */
import dnsPacket, { type DnsPacket } from "dns-packet"
import { describe, expect, it } from "vitest"
import {
  decide,
  encodeWithin,
  failureReply,
  fitReply,
  peekQuestion,
  Rcode,
  sizeLimit,
} from "../../../../src/services/agent/dns/answer.js"
import { buildLookupTable } from "../../../../src/services/agent/dns/lookup-table.js"

const pod = { namespace: "default", domain: "", searchDomains: ["default.svc.cluster.local"] }
const manyIps = Array.from({ length: 100 }, (_, i) => `10.2.${Math.floor(i / 250)}.${(i % 250) + 1}`)
const table = buildLookupTable(
  {
    table: {
      "reviews.default.svc.cluster.local": { ips: ["10.0.0.1", "10.0.0.2"], registry: "External" },
      "big.default.svc.cluster.local": { ips: manyIps, registry: "External" },
    },
  },
  pod,
)

const query = (name: string, type: string, extra: Partial<DnsPacket> = {}) =>
  dnsPacket.encode({
    id: 4242,
    type: "query",
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ name, type, class: "IN" }],
    ...extra,
  })

const edns = (size: number): Partial<DnsPacket> => ({
  additionals: [{ name: ".", type: "OPT", udpPayloadSize: size }],
})

const answered = (bytes: Buffer) => {
  const decision = decide(table, bytes, "udp")
  if (decision._tag !== "Answer") throw new Error(`expected an answer, got ${decision._tag}`)
  return dnsPacket.decode(decision.response)
}

describe("decide", () => {
  it("answers a table name authoritatively, with the query's id, question and RD, RA set", () => {
    const reply = answered(query("reviews.default.svc.cluster.local", "A"))
    expect(reply.id).toBe(4242)
    expect(reply.type).toBe("response")
    expect(reply.rcode).toBe("NOERROR")
    expect(reply.flags & dnsPacket.AUTHORITATIVE_ANSWER).not.toBe(0)
    expect(reply.flag_rd).toBe(true)
    expect(reply.flags & dnsPacket.RECURSION_AVAILABLE).not.toBe(0)
    expect(reply.flag_tc).toBe(false)
    expect(reply.questions).toEqual([{ name: "reviews.default.svc.cluster.local", type: "A", class: "IN" }])
    expect(reply.answers.map((a) => a.data).sort()).toEqual(["10.0.0.1", "10.0.0.2"])
    expect(reply.answers.every((a) => a.ttl === 30)).toBe(true)
  })

  it("answers AAAA for a v4-only name empty with NOERROR", () => {
    const reply = answered(query("reviews.default.svc.cluster.local", "AAAA"))
    expect(reply.rcode).toBe("NOERROR")
    expect(reply.answers).toEqual([])
  })

  it("rotates the addresses from one query to the next", () => {
    const first = (rotation: number) => {
      const decision = decide(table, query("reviews.default.svc.cluster.local", "A"), "udp", rotation)
      if (decision._tag !== "Answer") throw new Error(decision._tag)
      return dnsPacket.decode(decision.response).answers.map((a) => a.data)
    }
    expect(first(0)).toEqual(["10.0.0.1", "10.0.0.2"])
    expect(first(1)).toEqual(["10.0.0.2", "10.0.0.1"])
  })

  it("forwards unknown names, and everything before the first table", () => {
    const unknown = decide(table, query("www.example.org", "A"), "udp")
    expect(unknown._tag).toBe("Forward")
    const early = decide(undefined, query("reviews.default.svc.cluster.local", "A"), "tcp")
    expect(early).toMatchObject({ _tag: "Forward", name: "reviews.default.svc.cluster.local", limit: 65535 })
  })

  it("answers a query without a question with SERVFAIL, and drops what is not a query", () => {
    const decision = decide(table, dnsPacket.encode({ id: 7, type: "query", questions: [] }), "udp")
    if (decision._tag !== "Reply") throw new Error(decision._tag)
    const reply = dnsPacket.decode(decision.response)
    expect(reply.rcode).toBe("SERVFAIL")
    expect(reply.id).toBe(7)
    expect(decide(table, Buffer.from([1, 2, 3]), "udp")._tag).toBe("Drop")
    expect(decide(table, dnsPacket.encode({ id: 1, type: "response", questions: [] }), "udp")._tag).toBe("Drop")
  })

  it("truncates a big UDP answer to 512 bytes (no EDNS) and sets TC; TCP carries it whole", () => {
    const udp = decide(table, query("big.default.svc.cluster.local", "A"), "udp")
    if (udp._tag !== "Answer") throw new Error(udp._tag)
    expect(udp.response.length).toBeLessThanOrEqual(512)
    const cut = dnsPacket.decode(udp.response)
    expect(cut.flag_tc).toBe(true)
    expect(cut.answers.length).toBeGreaterThan(0)
    expect(cut.answers.length).toBeLessThan(100)
    const tcp = decide(table, query("big.default.svc.cluster.local", "A"), "tcp")
    if (tcp._tag !== "Answer") throw new Error(tcp._tag)
    const whole = dnsPacket.decode(tcp.response)
    expect(whole.flag_tc).toBe(false)
    expect(whole.answers.map((a) => a.data).sort()).toEqual([...manyIps].sort())
  })

  it("uses the client's EDNS size over UDP, never less than 512", () => {
    expect(sizeLimit(dnsPacket.decode(query("a", "A", edns(1232))), "udp")).toBe(1232)
    expect(sizeLimit(dnsPacket.decode(query("a", "A", edns(100))), "udp")).toBe(512)
    expect(sizeLimit(dnsPacket.decode(query("a", "A")), "udp")).toBe(512)
    expect(sizeLimit(dnsPacket.decode(query("a", "A", edns(1232))), "tcp")).toBe(65535)
    const big = answered(query("big.default.svc.cluster.local", "A", edns(8192)))
    expect(big.flag_tc).toBe(false)
    expect(big.answers).toHaveLength(100)
  })
})

describe("encodeWithin / fitReply", () => {
  const response: DnsPacket = {
    id: 1,
    type: "response",
    questions: [{ name: "x.example", type: "A" }],
    answers: manyIps.map((ip) => ({ name: "x.example", type: "A", ttl: 30, data: ip })),
    additionals: [{ name: ".", type: "OPT", udpPayloadSize: 1232 }],
  }

  it("keeps what fits and the OPT record, and sets TC", () => {
    const bytes = encodeWithin(response, 600)
    expect(bytes.length).toBeLessThanOrEqual(600)
    const decoded = dnsPacket.decode(bytes)
    expect(decoded.flag_tc).toBe(true)
    expect(decoded.additionals.map((r) => r.type)).toEqual(["OPT"])
    // as many as fit: one more would not
    expect(
      dnsPacket.encodingLength({ ...response, answers: response.answers!.slice(0, decoded.answers.length + 1) }),
    ).toBeGreaterThan(600)
  })

  it("leaves an upstream reply that fits untouched and cuts one that does not", () => {
    const whole = dnsPacket.encode(response)
    expect(fitReply(whole, 65535)).toBe(whole)
    const cut = dnsPacket.decode(fitReply(whole, 512))
    expect(cut.flag_tc).toBe(true)
    expect(cut.id).toBe(1)
    const garbage = Buffer.concat([whole.subarray(0, 12), Buffer.alloc(600, 0xff)])
    const header = dnsPacket.decode(fitReply(garbage, 512))
    expect(header.flag_tc).toBe(true)
    expect(header.answers).toEqual([])
  })

  it("builds a failure reply with the query's id, opcode and question", () => {
    const q = dnsPacket.decode(query("www.example.org", "AAAA"))
    const reply = dnsPacket.decode(failureReply(q, Rcode.SERVFAIL))
    expect(reply).toMatchObject({ id: 4242, type: "response", rcode: "SERVFAIL", opcode: "QUERY", flag_rd: true })
    expect(reply.questions).toEqual([{ name: "www.example.org", type: "AAAA", class: "IN" }])
  })
})

describe("peekQuestion", () => {
  it("reads the first question of a query as the full decode does, and nothing else", () => {
    const packet = (name: string, type: string) =>
      dnsPacket.encode({ id: 9, type: "query", questions: [{ name, type }] })
    for (const [name, type] of [
      ["reviews.default.svc.cluster.local", "A"],
      ["Mixed.Case.Example", "AAAA"],
      ["x.example.org", "CNAME"],
      ["", "A"],
    ] as const) {
      const decoded = dnsPacket.decode(packet(name, type)).questions[0]!
      expect(peekQuestion(packet(name, type))).toEqual({ name: decoded.name, type: decoded.type })
    }
    expect(peekQuestion(packet("a.example", "TXT"))?.type).toBe("TYPE16")
    // responses, truncated packets, compressed or oversized labels: left to the full decode
    expect(peekQuestion(dnsPacket.encode({ id: 1, type: "response", questions: [{ name: "a", type: "A" }] }))).toBe(
      undefined,
    )
    expect(peekQuestion(packet("a.example", "A").subarray(0, 15))).toBeUndefined()
    expect(peekQuestion(Buffer.from([0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1]))).toBeUndefined()
    expect(peekQuestion(Buffer.from([0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]))).toBeUndefined()
  })
})
