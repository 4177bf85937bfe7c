/**
 * The DNS proxy layer end to end with the real `dig`: a NameTable fed through NameTableSink is
 * answered over UDP and TCP (A, AAAA, headless, wildcard, short and search-expanded names), other
 * names are forwarded to a stand-in upstream server (dns-packet over UDP and TCP), sequentially
 * or in parallel, big answers are truncated over UDP and whole over TCP, and the dns_* metrics
 * count it all.
 */
import { execFile } from "node:child_process"
import { createSocket } from "node:dgram"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { connect, createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "@effect/vitest"
import dnsPacket, { type DecodedPacket } from "dns-packet"
import { Context, Effect, Layer, Schedule } from "effect"
import type { DnsProxySettings } from "../../../../src/layers/agent/dns/dns-proxy.js"
import { layer as dnsProxyLayer } from "../../../../src/layers/agent/dns/layer.js"
import { layer as metricsLayer } from "../../../../src/layers/metrics.js"
import { NameTableSink } from "../../../../src/services/agent/dns/name-table-sink.js"
import { Metrics } from "../../../../src/services/metrics/metrics.js"
import { ORCHESTRATOR_REGISTRY } from "../../../../src/services/registry/orchestrator/service.js"
import type { NameTable } from "../../../../src/services/xds/proxygen/nds/name-table.js"
import { freePort, freePorts } from "../../../support/ports.js"

const run = promisify(execFile)

const manyIps = Array.from({ length: 60 }, (_, i) => `10.3.0.${i + 1}`)

const service = (name: string, namespace: string, ips: Array<string>) => ({
  [`${name}.${namespace}.svc.cluster.local`]: {
    ips,
    registry: ORCHESTRATOR_REGISTRY,
    shortname: name,
    namespace,
    alt_hosts: [`${name}.${namespace}`, `${name}.${namespace}.svc`],
  },
})

const nameTable: NameTable = {
  table: {
    ...service("reviews", "default", ["10.0.0.1"]),
    ...service("ratings", "other", ["10.0.0.2", "fd00::2"]),
    // headless: the endpoint addresses
    ...service("db", "default", ["10.1.0.1", "10.1.0.2", "10.1.0.3"]),
    ...service("big", "default", manyIps),
    "*.wild.example.com": { ips: ["192.0.2.20"], registry: "External" },
  },
}

/** What the stand-in upstream saw. */
type Seen = Array<{ readonly name: string; readonly transport: "udp" | "tcp" }>

const upstreamReply = (query: DecodedPacket): Buffer => {
  const question = query.questions[0]!
  const known = question.name === "forwarded.example.org" && question.type === "A"
  return dnsPacket.encode({
    id: query.id,
    type: "response",
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (known ? 0 : 3),
    questions: [question],
    answers: known ? [{ name: question.name, type: "A", ttl: 60, data: "198.51.100.7" }] : [],
  })
}

/** A DNS server on 127.0.0.1 (UDP and TCP) answering `forwarded.example.org`; `silent` never answers. */
const standInUpstream = (options: { readonly silent: boolean }) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const port = await freePort()
      const seen: Seen = []
      const udp = createSocket("udp4")
      udp.on("message", (bytes, from) => {
        const query = dnsPacket.decode(bytes)
        seen.push({ name: query.questions[0]!.name, transport: "udp" })
        if (!options.silent) udp.send(upstreamReply(query), from.port, from.address)
      })
      const tcp = createServer((socket) => {
        socket.on("data", (bytes) => {
          const query = dnsPacket.decode(bytes.subarray(2))
          seen.push({ name: query.questions[0]!.name, transport: "tcp" })
          if (!options.silent) {
            const reply = upstreamReply(query)
            const length = Buffer.alloc(2)
            length.writeUInt16BE(reply.length)
            socket.end(Buffer.concat([length, reply]))
          }
        })
        socket.on("error", () => {})
      })
      await new Promise<void>((resolve) => udp.bind(port, "127.0.0.1", resolve))
      await new Promise<void>((resolve) => tcp.listen(port, "127.0.0.1", resolve))
      return { port, seen, udp, tcp }
    }),
    ({ udp, tcp }) =>
      Effect.promise(async () => {
        udp.close()
        await new Promise<void>((resolve) => tcp.close(() => resolve()))
      }),
  )

const resolvConf = Effect.acquireRelease(
  Effect.promise(async () => {
    const dir = await mkdtemp(join(tmpdir(), "mesh-dns-"))
    const path = join(dir, "resolv.conf")
    await writeFile(
      path,
      "search default.svc.cluster.local svc.cluster.local cluster.local\nnameserver 127.0.0.1\noptions ndots:5\n",
    )
    return { dir, path }
  }),
  ({ dir }) => Effect.promise(() => rm(dir, { recursive: true, force: true })),
)

/** Starts the proxy layer on a free port; its NameTableSink and the Metrics it counts into. */
const startProxy = (settings: Omit<DnsProxySettings, "address" | "namespace" | "domain" | "resolvConfPath">) =>
  Effect.gen(function* () {
    const conf = yield* resolvConf
    const port = yield* Effect.promise(freePort)
    const context = yield* Layer.build(
      dnsProxyLayer({
        address: `127.0.0.1:${port}`,
        namespace: "default",
        domain: "",
        resolvConfPath: conf.path,
        ...settings,
      }).pipe(Layer.provideMerge(metricsLayer("mesh-agent"))),
    )
    const sink = Context.get(context, NameTableSink)
    const metrics = Context.get(context, Metrics)
    const dig = (...args: Array<string>) =>
      Effect.promise(() => run("dig", ["@127.0.0.1", "-p", String(port), "+tries=1", "+time=5", ...args])).pipe(
        Effect.map((r) => r.stdout),
      )
    const short = (...args: Array<string>) =>
      Effect.map(dig("+short", ...args), (out) => out.split("\n").filter((line) => line !== ""))
    const metric = (name: string) =>
      Effect.promise(async () => {
        // a counter has one value; a histogram's count is its `_count` sample
        const values = (await metrics.registry.getSingleMetric(name)!.get()).values as Array<{
          readonly value: number
          readonly metricName?: string
        }>
        return values.find((v) => v.metricName === undefined || v.metricName === `${name}_count`)!.value
      })
    return { sink, dig, short, metric, port }
  })

const framed = (message: Buffer): Buffer => {
  const length = Buffer.alloc(2)
  length.writeUInt16BE(message.length)
  return Buffer.concat([length, message])
}

const waitUntil = async (check: () => boolean | Promise<boolean>, ms = 5_000) => {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not reached")
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** A UDP socket of its own (one client source) sending A queries and keeping the replies. */
const udpClient = Effect.acquireRelease(
  Effect.promise(async () => {
    const socket = createSocket("udp4")
    const replies: Array<DecodedPacket> = []
    socket.on("message", (bytes) => replies.push(dnsPacket.decode(bytes)))
    await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", () => resolve()))
    let id = 0
    const send = (name: string, port: number) =>
      socket.send(dnsPacket.encode({ id: ++id, type: "query", questions: [{ name, type: "A" }] }), port, "127.0.0.1")
    return { socket, replies, send }
  }),
  ({ socket }) => Effect.sync(() => socket.close()),
)

const header = (output: string) => {
  const status = /status: (\w+)/.exec(output)?.[1]
  const flags = /;; flags: ([a-z ]+);/.exec(output)?.[1]?.split(" ") ?? []
  const answers = Number(/ANSWER: (\d+)/.exec(output)?.[1])
  return { status, flags, answers }
}

describe("DNS proxy (dig)", () => {
  it.scopedLive("answers mesh names from the latest table over UDP and TCP, forwards the rest", () =>
    Effect.gen(function* () {
      const upstream = yield* standInUpstream({ silent: false })
      const proxy = yield* startProxy({ forwardParallel: false, upstreams: [`127.0.0.1:${upstream.port}`] })

      // before the first table every query goes upstream (which does not know the mesh's names)
      expect(header(yield* proxy.dig("reviews.default.svc.cluster.local", "A")).status).toBe("NXDOMAIN")
      expect(upstream.seen).toEqual([{ name: "reviews.default.svc.cluster.local", transport: "udp" }])

      yield* proxy.sink.update(nameTable)
      expect(yield* proxy.short("reviews.default.svc.cluster.local", "A")).toEqual(["10.0.0.1"])
      expect(yield* proxy.short("+tcp", "reviews.default.svc.cluster.local", "A")).toEqual(["10.0.0.1"])
      const full = yield* proxy.dig("reviews.default.svc.cluster.local", "A")
      expect(header(full)).toMatchObject({ status: "NOERROR", answers: 1 })
      expect(header(full).flags).toContain("aa")
      expect(full).toMatch(/reviews\.default\.svc\.cluster\.local\.\s+30\s+IN\s+A\s+10\.0\.0\.1/)

      // a v4-only host has no AAAA: an empty NOERROR answer, not NXDOMAIN
      expect(header(yield* proxy.dig("reviews.default.svc.cluster.local", "AAAA"))).toMatchObject({
        status: "NOERROR",
        answers: 0,
      })
      expect(yield* proxy.short("ratings.other.svc.cluster.local", "AAAA")).toEqual(["fd00::2"])

      // headless: all endpoint addresses; wildcard: any name below it
      expect((yield* proxy.short("db.default.svc.cluster.local", "A")).sort()).toEqual([
        "10.1.0.1",
        "10.1.0.2",
        "10.1.0.3",
      ])
      expect(yield* proxy.short("api.wild.example.com", "A")).toEqual(["192.0.2.20"])

      // short names as cluster DNS answers them, and what a resolver's search path makes of them
      expect(yield* proxy.short("reviews", "A")).toEqual(["10.0.0.1"])
      expect(yield* proxy.short("ratings.other", "A")).toEqual(["10.0.0.2"])
      expect(yield* proxy.short("reviews.default.default.svc.cluster.local", "A")).toEqual([
        "reviews.default.",
        "10.0.0.1",
      ])
      expect(yield* proxy.short("+tcp", "ratings.other.default.svc.cluster.local", "A")).toEqual([
        "ratings.other.",
        "10.0.0.2",
      ])

      // none of those went upstream
      expect(upstream.seen).toHaveLength(1)

      // other names are forwarded, over the client's transport
      expect(yield* proxy.short("forwarded.example.org", "A")).toEqual(["198.51.100.7"])
      expect(yield* proxy.short("+tcp", "forwarded.example.org", "A")).toEqual(["198.51.100.7"])
      expect(header(yield* proxy.dig("missing.example.org", "A")).status).toBe("NXDOMAIN")
      expect(upstream.seen.slice(1)).toEqual([
        { name: "forwarded.example.org", transport: "udp" },
        { name: "forwarded.example.org", transport: "tcp" },
        { name: "missing.example.org", transport: "udp" },
      ])

      // a new table replaces the old one
      yield* proxy.sink.update({ table: service("reviews", "default", ["10.0.0.9"]) })
      expect(yield* proxy.short("reviews.default.svc.cluster.local", "A")).toEqual(["10.0.0.9"])
      expect(header(yield* proxy.dig("db.default.svc.cluster.local", "A")).status).toBe("NXDOMAIN")

      expect(yield* proxy.metric("dns_requests_total")).toBe(17)
      expect(yield* proxy.metric("dns_upstream_requests_total")).toBe(5)
      expect(yield* proxy.metric("dns_upstream_failures_total")).toBe(0)
      expect(yield* proxy.metric("dns_upstream_request_duration_seconds")).toBe(5)
    }),
  )

  it.scopedLive("truncates a big answer over UDP (TC set) and gives it whole over TCP", () =>
    Effect.gen(function* () {
      const upstream = yield* standInUpstream({ silent: false })
      const proxy = yield* startProxy({ forwardParallel: false, upstreams: [`127.0.0.1:${upstream.port}`] })
      yield* proxy.sink.update(nameTable)

      const udp = yield* proxy.dig("+ignore", "+noedns", "big.default.svc.cluster.local", "A")
      expect(header(udp).flags).toContain("tc")
      expect(header(udp).answers).toBeGreaterThan(0)
      expect(header(udp).answers).toBeLessThan(manyIps.length)
      // with EDNS the client's larger buffer applies (dig offers 1232 bytes): more, still not all
      const edns = yield* proxy.dig("+ignore", "big.default.svc.cluster.local", "A")
      expect(header(edns).flags).toContain("tc")
      expect(header(edns).answers).toBeGreaterThan(header(udp).answers)

      const tcp = yield* proxy.dig("+tcp", "big.default.svc.cluster.local", "A")
      expect(header(tcp).flags).not.toContain("tc")
      expect(header(tcp).answers).toBe(manyIps.length)
      // without +ignore dig itself retries over TCP on TC, as a resolver does
      expect((yield* proxy.short("big.default.svc.cluster.local", "A")).sort()).toEqual([...manyIps].sort())
    }),
  )

  it.scopedLive("asks upstreams one after another, or all at once with DNS_FORWARD_PARALLEL", () =>
    Effect.gen(function* () {
      const silent = yield* standInUpstream({ silent: true })
      const live = yield* standInUpstream({ silent: false })
      const upstreams = [`127.0.0.1:${silent.port}`, `127.0.0.1:${live.port}`]

      // one after another: the silent server times out first, then the live one answers
      const sequential = yield* startProxy({ forwardParallel: false, upstreams, upstreamTimeout: "300 millis" })
      expect(yield* sequential.short("forwarded.example.org", "A")).toEqual(["198.51.100.7"])
      expect(silent.seen).toHaveLength(1)
      expect(live.seen).toHaveLength(1)

      // in parallel the live server's answer wins long before the silent one's timeout (60 s,
      // beyond dig's own 5 s: a sequential proxy could not answer in time)
      const parallel = yield* startProxy({ forwardParallel: true, upstreams, upstreamTimeout: "60 seconds" })
      expect(yield* parallel.short("forwarded.example.org", "A")).toEqual(["198.51.100.7"])
      expect(silent.seen).toHaveLength(2)
      expect(live.seen).toHaveLength(2)
      expect(yield* parallel.metric("dns_upstream_failures_total")).toBe(0)
    }),
  )

  it.scopedLive(
    "bounds forwarded queries: a UDP client past its own bound is dropped, any past the total refused",
    () =>
      Effect.gen(function* () {
        const silent = yield* standInUpstream({ silent: true })
        const proxy = yield* startProxy({
          forwardParallel: false,
          upstreams: [`127.0.0.1:${silent.port}`],
          upstreamTimeout: "1500 millis",
          maxInflight: 3,
          maxInflightPerClient: 2,
        })
        yield* proxy.sink.update(nameTable)
        const flooder = yield* udpClient
        // five unknown names from one source: two take slots, three are dropped (no reply at all)
        for (let i = 0; i < 5; i++) flooder.send(`silent-${i}.example.org`, proxy.port)
        yield* Effect.promise(() => waitUntil(() => silent.seen.length >= 2))
        // a second source takes the last slot of the total...
        const second = yield* udpClient
        second.send("silent-second.example.org", proxy.port)
        yield* Effect.promise(() => waitUntil(() => silent.seen.length >= 3))
        // ...so a third is refused at once, while the table still answers everyone
        const refused = yield* proxy.dig("forwarded.example.org", "A")
        expect(header(refused).status).toBe("REFUSED")
        expect(yield* proxy.short("reviews.default.svc.cluster.local", "A")).toEqual(["10.0.0.1"])
        expect(silent.seen).toHaveLength(3)
        expect(flooder.replies).toEqual([])
        // the slots come back when the upstream times out (SERVFAIL to the two the proxy kept)
        yield* Effect.promise(() => waitUntil(() => flooder.replies.length === 2, 10_000))
        expect(flooder.replies.map((r) => r.rcode)).toEqual(["SERVFAIL", "SERVFAIL"])
        yield* Effect.promise(() => waitUntil(() => second.replies.length === 1, 10_000))
        expect(header(yield* proxy.dig("+tries=1", "again.example.org", "A")).status).toBe("SERVFAIL")
      }),
  )

  it.scopedLive("stops reading a TCP connection whose answers are not read, and serves it once it reads", () =>
    Effect.gen(function* () {
      const upstream = yield* standInUpstream({ silent: false })
      const proxy = yield* startProxy({
        forwardParallel: false,
        upstreams: [`127.0.0.1:${upstream.port}`],
        tcpMaxUnreadBytes: 4096,
        // a connection that reads nothing is otherwise closed after 10 s idle
        tcpIdleTimeout: "60 seconds",
      })
      yield* proxy.sink.update(nameTable)
      const count = 200_000
      const socket = connect({ host: "127.0.0.1", port: proxy.port })
      yield* Effect.addFinalizer(() => Effect.sync(() => socket.destroy()))
      yield* Effect.promise(() => new Promise<void>((resolve) => socket.once("connect", () => resolve())))
      // the whole pipeline at once (about 9 MB), nothing read back yet
      const query = framed(dnsPacket.encode({ id: 1, type: "query", questions: [{ name: "reviews", type: "A" }] }))
      socket.write(Buffer.concat(Array.from({ length: count }, () => query)))
      // the proxy stops reading once the kernel's buffers and its own 4 KiB of unread answers fill
      let before = -1
      yield* Effect.map(proxy.metric("dns_requests_total"), (now) => {
        const still = now === before && now > 0
        before = now
        return still
      }).pipe(
        Effect.repeat({ schedule: Schedule.spaced("200 millis"), until: (still) => still }),
        Effect.timeout("20 seconds"),
      )
      expect(before).toBeLessThan(count)
      // other clients are served meanwhile
      expect(yield* proxy.short("+tcp", "reviews", "A")).toEqual(["10.0.0.1"])
      // reading the answers lets the rest through: every query is answered
      let answered = 0
      let pending = Buffer.alloc(0)
      socket.on("data", (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk])
        while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
          pending = pending.subarray(2 + pending.readUInt16BE(0))
          answered++
        }
      })
      yield* Effect.promise(() => waitUntil(() => answered === count, 60_000))
    }),
  )

  it.scopedLive("answers SERVFAIL and counts a failure when no upstream answers", () =>
    Effect.gen(function* () {
      const silent = yield* standInUpstream({ silent: true })
      const [closed] = yield* Effect.promise(() => freePorts(1))
      const proxy = yield* startProxy({
        forwardParallel: false,
        upstreams: [`127.0.0.1:${closed}`, `127.0.0.1:${silent.port}`],
        upstreamTimeout: "300 millis",
      })
      expect(header(yield* proxy.dig("forwarded.example.org", "A")).status).toBe("SERVFAIL")
      expect(header(yield* proxy.dig("+tcp", "forwarded.example.org", "A")).status).toBe("SERVFAIL")
      expect(yield* proxy.metric("dns_upstream_requests_total")).toBe(2)
      expect(yield* proxy.metric("dns_upstream_failures_total")).toBe(2)
    }),
  )
})
