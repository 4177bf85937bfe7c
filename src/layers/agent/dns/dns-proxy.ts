/**
 * The agent's DNS proxy: UDP and TCP servers on `DNS_PROXY_ADDR` answering the mesh's names from
 * the latest name table (NDS, delivered through `NameTableSink`) and forwarding every other query
 * to the nameservers of resolv.conf. Answers from the table are computed synchronously in the
 * socket callback (the hot path: no fiber per query); forwarded queries run as fibers of the
 * proxy's scope, interrupted when it closes.
 *
 * What one client can hold is bounded (issue 34 finding 3: one TCP connection pipelining queries
 * without reading the answers grew the agent to 2.4 GB, a UDP flood to 683 MB, and every other
 * client's lookups timed out):
 * - forwarded queries in flight: `maxInflight` in all, `maxInflightPerClient` per UDP source or
 *   TCP connection (see services/agent/dns/inflight.ts). Over UDP, a query past its client's
 *   bound is dropped (that client already waits for as many answers) and one past the total is
 *   answered REFUSED at once;
 * - a TCP connection is read only while it has fewer than `maxInflightPerClient` queries in
 *   flight and fewer than `tcpMaxUnreadBytes` of answers it has not read: otherwise the proxy
 *   stops reading it (its queries wait in the kernel, then in the client) until an answer ends
 *   or the client reads; connections beyond `maxTcpConnections` are closed at once;
 * - what is turned away, and upstream failures, are logged throttled (one line, then one summary
 *   per interval).
 */
import { createSocket, type Socket as UdpSocket } from "node:dgram"
import { readFile } from "node:fs/promises"
import { createServer, isIP, type Server, type Socket } from "node:net"
import { Data, Duration, Effect, FiberSet, Runtime } from "effect"
import {
  type Decision,
  decide,
  failureReply,
  fitReply,
  peekQuestion,
  Rcode,
  type Transport,
} from "../../../services/agent/dns/answer.js"
import { emptyTally, type InflightLimits, makeInflight, tallyLine } from "../../../services/agent/dns/inflight.js"
import { parseListenAddress } from "../../../services/agent/dns/listen-address.js"
import {
  buildLookupTable,
  type LookupTable,
  lookup,
  type PodDns,
  tableSize,
} from "../../../services/agent/dns/lookup-table.js"
import type { NameTableSinkShape } from "../../../services/agent/dns/name-table-sink.js"
import { parseResolvConf, parseUpstream, type Upstream } from "../../../services/agent/dns/resolv-conf.js"
import { formatWindow, makeThrottledLogger } from "../../../services/logging/log-throttle.js"
import { withScope } from "../../../services/logging/logging.js"
import { Metrics } from "../../../services/metrics/metrics.js"
import { forwardQuery, type UpstreamSettings } from "./upstream.js"

export class DnsProxyError extends Data.TaggedError("DnsProxyError")<{ readonly message: string }> {}

export const DEFAULT_RESOLV_CONF = "/etc/resolv.conf"

/** The bounds' defaults (the agent's env table documents the same values). */
export const DNS_PROXY_DEFAULTS = {
  maxInflight: 1024,
  maxInflightPerClient: 64,
  tcpMaxUnreadBytes: 64 * 1024,
  maxTcpConnections: 256,
} as const

export interface DnsProxySettings {
  /** `DNS_PROXY_ADDR`. */
  readonly address: string
  /** `DNS_FORWARD_PARALLEL`. */
  readonly forwardParallel: boolean
  /** The pod's namespace and `--domain` (for the short names of its cluster's services). */
  readonly namespace: string
  readonly domain: string
  /** Search domains, and nameservers unless `upstreams` is given; default /etc/resolv.conf. */
  readonly resolvConfPath?: string
  /** Upstream servers (`ip:port`) used instead of resolv.conf's nameservers. */
  readonly upstreams?: ReadonlyArray<string>
  /** Per exchange with one upstream server; default 5 s. */
  readonly upstreamTimeout?: Duration.DurationInput
  /** A TCP client connection idle this long is closed; default 10 s. */
  readonly tcpIdleTimeout?: Duration.DurationInput
  /** `DNS_PROXY_MAX_INFLIGHT`: forwarded queries in flight, all clients together. */
  readonly maxInflight?: number
  /** `DNS_PROXY_MAX_INFLIGHT_PER_CLIENT`: for one UDP source (address and port) or TCP connection. */
  readonly maxInflightPerClient?: number
  /** `DNS_PROXY_TCP_MAX_UNREAD_BYTES`: answers a TCP client has not read before it is no longer read. */
  readonly tcpMaxUnreadBytes?: number
  /** `DNS_PROXY_MAX_TCP_CONNECTIONS`: open TCP client connections; more are closed at once. */
  readonly maxTcpConnections?: number
  /** Interval of the summaries of what was turned away and of upstream failures; default 10 s. */
  readonly logInterval?: Duration.DurationInput
}

export interface DnsProxy {
  readonly sink: NameTableSinkShape
  /** The port bound (the given one, or the one picked for port 0). */
  readonly port: number
}

const dnsMetrics = Effect.map(Metrics, (metrics) => ({
  requests: metrics.counter("dns_requests_total", "Total number of DNS requests."),
  upstreamRequests: metrics.counter(
    "dns_upstream_requests_total",
    "Total number of DNS requests forwarded to upstream.",
  ),
  upstreamFailures: metrics.counter("dns_upstream_failures_total", "Total number of DNS failures."),
  upstreamDuration: metrics.histogram(
    "dns_upstream_request_duration_seconds",
    "Total time in seconds to get a DNS response from upstream.",
    [],
    [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  ),
}))

const readResolvConf = (path: string) =>
  Effect.tryPromise({
    try: () => readFile(path, "utf8"),
    catch: (e) => new DnsProxyError({ message: `failed to read ${path}: ${e instanceof Error ? e.message : e}` }),
  }).pipe(Effect.map(parseResolvConf))

const upstreamsFrom = (given: ReadonlyArray<string>) =>
  Effect.forEach(given, (address) => {
    const upstream = parseUpstream(address)
    return upstream === undefined
      ? Effect.fail(new DnsProxyError({ message: `bad upstream DNS server "${address}"` }))
      : Effect.succeed(upstream)
  })

const bindUdp = (host: string, port: number) =>
  Effect.acquireRelease(
    Effect.async<UdpSocket, DnsProxyError>((resume) => {
      const socket = createSocket(isIP(host) === 6 ? "udp6" : "udp4")
      const onError = (e: Error) => {
        socket.close()
        resume(Effect.fail(new DnsProxyError({ message: `DNS proxy on udp ${host}:${port}: ${e.message}` })))
      }
      socket.once("error", onError)
      socket.bind(port, host, () => {
        socket.off("error", onError)
        resume(Effect.succeed(socket))
      })
    }),
    (socket) =>
      Effect.async<void>((resume) => {
        socket.close(() => resume(Effect.void))
      }),
  )

const bindTcp = (
  host: string,
  port: number,
  connections: Set<Socket>,
  maxConnections: number,
  onConnection: (socket: Socket) => void,
) =>
  Effect.acquireRelease(
    Effect.async<Server, DnsProxyError>((resume) => {
      const server = createServer((socket) => {
        connections.add(socket)
        socket.on("close", () => connections.delete(socket))
        onConnection(socket)
      })
      // Node closes connections past this count as they arrive
      server.maxConnections = maxConnections
      const onError = (e: Error) =>
        resume(Effect.fail(new DnsProxyError({ message: `DNS proxy on tcp ${host}:${port}: ${e.message}` })))
      server.once("error", onError)
      server.listen(port, host, () => {
        server.off("error", onError)
        resume(Effect.succeed(server))
      })
    }),
    (server) =>
      Effect.async<void>((resume) => {
        for (const socket of connections) {
          socket.destroy()
        }
        server.close(() => resume(Effect.void))
      }),
  )

const frame = (message: Buffer): Buffer => {
  const length = Buffer.alloc(2)
  length.writeUInt16BE(message.length)
  return Buffer.concat([length, message])
}

/** Starts the DNS proxy in the current scope. */
export const makeDnsProxy = (settings: DnsProxySettings) =>
  Effect.gen(function* () {
    const listen = parseListenAddress(settings.address)
    if (typeof listen === "string") return yield* new DnsProxyError({ message: listen })
    const resolvConfPath = settings.resolvConfPath ?? DEFAULT_RESOLV_CONF
    const resolv = yield* readResolvConf(resolvConfPath)
    const servers: ReadonlyArray<Upstream> =
      settings.upstreams !== undefined ? yield* upstreamsFrom(settings.upstreams) : resolv.nameservers
    if (servers.length === 0) yield* Effect.logWarning(`no nameservers in ${resolvConfPath}: unknown names fail`)
    const upstream: UpstreamSettings = {
      servers,
      parallel: settings.forwardParallel,
      timeout: Duration.decode(settings.upstreamTimeout ?? Duration.seconds(5)),
    }
    const pod: PodDns = { namespace: settings.namespace, domain: settings.domain, searchDomains: resolv.search }
    const tcpIdleMillis = Duration.toMillis(Duration.decode(settings.tcpIdleTimeout ?? Duration.seconds(10)))
    const limits: InflightLimits = {
      total: settings.maxInflight ?? DNS_PROXY_DEFAULTS.maxInflight,
      perClient: settings.maxInflightPerClient ?? DNS_PROXY_DEFAULTS.maxInflightPerClient,
    }
    const tcpMaxUnread = Math.max(1, settings.tcpMaxUnreadBytes ?? DNS_PROXY_DEFAULTS.tcpMaxUnreadBytes)
    const maxTcpConnections = Math.max(1, settings.maxTcpConnections ?? DNS_PROXY_DEFAULTS.maxTcpConnections)
    const logInterval = Duration.decode(settings.logInterval ?? Duration.seconds(10))
    const metrics = yield* dnsMetrics
    const runtime = yield* Effect.runtime<never>()
    const runForward = yield* FiberSet.makeRuntime<never, void, never>()
    const logDebug = (message: string) => Runtime.runFork(runtime)(Effect.logDebug(message).pipe(withScope("dns")))
    const inflight = makeInflight(limits)

    // Upstream failures, one line per kind and interval: the reason names the server and what
    // failed, never the query's name (a flood of names must not become a flood of lines).
    const failureLog = yield* makeThrottledLogger({
      interval: logInterval,
      summary: (s) => `${s.count} more DNS upstream failures in the last ${formatWindow(s.windowMs)}: ${s.key}`,
    })
    // What was turned away: the first occurrence of an interval at once, then one summary line.
    let tally = emptyTally()
    let announced = false
    const noteOverload = (what: string) => {
      if (announced) return
      announced = true
      Runtime.runFork(runtime)(
        Effect.logWarning(
          `DNS proxy at its bounds: ${what}; more are summarised every ${formatWindow(Duration.toMillis(logInterval))}`,
        ).pipe(withScope("dns")),
      )
    }
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.zipRight(
          Effect.sleep(logInterval),
          Effect.suspend(() => {
            const line = tallyLine(tally, formatWindow(Duration.toMillis(logInterval)), limits)
            tally = emptyTally()
            announced = false
            return line === undefined ? Effect.void : Effect.logWarning(line)
          }),
        ),
      ).pipe(withScope("dns")),
    )

    // replaced whole on each NDS response; read by the socket callbacks
    let table: LookupTable | undefined
    let rotation = 0

    const forward = (bytes: Buffer, decision: Extract<Decision, { _tag: "Forward" }>, transport: Transport) =>
      Effect.gen(function* () {
        metrics.upstreamRequests.inc()
        const [elapsed, reply] = yield* Effect.timed(
          forwardQuery(upstream, bytes, transport, (e) =>
            failureLog.log(e.reason, `upstream failure: ${e.reason}`),
          ).pipe(
            Effect.map((r) => fitReply(r, decision.limit)),
            Effect.catchAll((e) =>
              Effect.sync(() => metrics.upstreamFailures.inc()).pipe(
                Effect.zipRight(failureLog.log(`no answer: ${e.reason}`, `no upstream answered a query: ${e.reason}`)),
                Effect.as(failureReply(decision.query, Rcode.SERVFAIL)),
              ),
            ),
          ),
        )
        metrics.upstreamDuration.observe(Duration.toMillis(elapsed) / 1000)
        return reply
      }).pipe(withScope("dns"))

    // Only UDP gets here (a TCP connection is not read past its bound): that client already
    // waits for as many answers, so this one is not worth a reply.
    const dropForClient = () => {
      tally.dropped++
      noteOverload(`a UDP client has ${limits.perClient} queries in flight: its next ones are dropped`)
    }

    /**
     * Answers one query of `client`; `reply` sends the answer back where it came from and
     * `settled` runs when a forwarded query gave its slot back (TCP reads again then).
     */
    const handle = (
      bytes: Buffer,
      transport: Transport,
      client: string,
      reply: (response: Buffer) => void,
      settled?: () => void,
    ) => {
      metrics.requests.inc()
      if (transport === "udp" && inflight.heldBy(client) >= limits.perClient) {
        // The client is at its bound: unless the table answers it, this query is dropped, which
        // is found from its question alone (a flood must not cost a full decode per packet).
        const question = peekQuestion(bytes)
        if (
          question !== undefined &&
          (table === undefined || lookup(table, question.name, question.type) === undefined)
        ) {
          dropForClient()
          return
        }
      }
      rotation = (rotation + 1) % 0x7fffffff
      const decision = decide(table, bytes, transport, rotation)
      switch (decision._tag) {
        case "Answer":
        case "Reply":
          reply(decision.response)
          return
        case "Drop":
          logDebug(`dropped a ${transport} packet: ${decision.reason}`)
          return
        case "Forward": {
          const refusal = inflight.acquire(client)
          if (refusal === "client") {
            dropForClient()
            return
          }
          if (refusal === "total") {
            tally.refused++
            noteOverload(`${limits.total} queries in flight: further ones are refused`)
            reply(failureReply(decision.query, Rcode.REFUSED))
            return
          }
          runForward(
            Effect.map(forward(bytes, decision, transport), reply).pipe(
              Effect.ensuring(
                Effect.sync(() => {
                  inflight.release(client)
                  settled?.()
                }),
              ),
            ),
          )
          return
        }
      }
    }

    let connectionCount = 0
    const onTcpConnection = (socket: Socket) => {
      const client = `tcp#${++connectionCount}`
      let pending: Buffer = Buffer.alloc(0)
      let reading = true
      socket.setTimeout(tcpIdleMillis, () => socket.destroy())
      socket.on("error", (e) => logDebug(`tcp client: ${e.message}`))
      // each answer's write, once flushed to the kernel, lets a paused connection be read again
      // ('drain' alone would not do: it only follows a write past the socket's high-water mark)
      const reply = (response: Buffer) => {
        if (socket.writable) socket.write(frame(response), afterWrite)
      }
      const afterWrite = () => {
        if (!reading) pump()
      }
      const blocked = () => inflight.heldBy(client) >= limits.perClient || socket.writableLength >= tcpMaxUnread
      // Several queries may arrive on one connection, pipelined; answers go out as they are
      // ready. Whole queries are taken while the connection is under its bounds; past them the
      // socket is paused (no more reads, so the kernel and then the client hold the rest).
      const pump = () => {
        if (socket.destroyed) return
        while (pending.length >= 2 && !blocked()) {
          const size = pending.readUInt16BE(0)
          if (pending.length < 2 + size) break
          const query = pending.subarray(2, 2 + size)
          pending = pending.subarray(2 + size)
          handle(query, "tcp", client, reply, pump)
        }
        if (blocked()) {
          if (reading) {
            reading = false
            socket.pause()
            tally.paused++
            noteOverload("a TCP client has too many queries in flight or answers unread: it is no longer read")
          }
        } else if (!reading) {
          reading = true
          socket.resume()
        }
      }
      socket.on("data", (chunk) => {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
        pump()
      })
    }

    const connections = new Set<Socket>()
    let port = listen.port
    const bindBoth = (host: string) =>
      Effect.gen(function* () {
        const udp = yield* bindUdp(host, port)
        port = udp.address().port
        udp.on("message", (bytes, from) =>
          handle(bytes, "udp", `udp ${from.address}:${from.port}`, (response) => {
            try {
              udp.send(response, from.port, from.address)
            } catch {
              // the socket closed (shutdown) while a forwarded answer was on its way
            }
          }),
        )
        yield* bindTcp(host, port, connections, maxTcpConnections, onTcpConnection)
      })
    for (const host of listen.required) yield* bindBoth(host)
    for (const host of listen.optional) {
      yield* bindBoth(host).pipe(
        Effect.catchAll((e) => Effect.logDebug(`${e.message}; serving the other addresses only`)),
      )
    }
    yield* Effect.logInfo(
      `DNS proxy listening on ${[...listen.required].join(", ")} port ${port} (udp, tcp); upstream ${
        servers.map((s) => `${s.host}:${s.port}`).join(", ") || "none"
      }${upstream.parallel ? " in parallel" : ""}; search ${resolv.search.join(" ") || "none"}`,
    )

    const sink: NameTableSinkShape = {
      update: (next) =>
        Effect.suspend(() => {
          table = buildLookupTable(next, pod)
          return Effect.logDebug(`name table updated: ${tableSize(table)} names`)
        }).pipe(withScope("dns")),
    }
    return { sink, port } satisfies DnsProxy
  }).pipe(withScope("dns"))
