/**
 * The agent's DNS proxy: UDP and TCP servers on `DNS_PROXY_ADDR` answering the mesh's names from
 * the latest name table (NDS, delivered through `NameTableSink`) and forwarding every other query
 * to the nameservers of resolv.conf. Answers from the table are computed synchronously in the
 * socket callback (the hot path: no fiber per query); forwarded queries run as fibers of the
 * proxy's scope, interrupted when it closes.
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
  Rcode,
  type Transport,
} from "../../../services/agent/dns/answer.js"
import { parseListenAddress } from "../../../services/agent/dns/listen-address.js"
import { buildLookupTable, type LookupTable, type PodDns, tableSize } from "../../../services/agent/dns/lookup-table.js"
import type { NameTableSinkShape } from "../../../services/agent/dns/name-table-sink.js"
import { parseResolvConf, parseUpstream, type Upstream } from "../../../services/agent/dns/resolv-conf.js"
import { withScope } from "../../../services/logging/logging.js"
import { Metrics } from "../../../services/metrics/metrics.js"
import { forwardQuery, type UpstreamSettings } from "./upstream.js"

export class DnsProxyError extends Data.TaggedError("DnsProxyError")<{ readonly message: string }> {}

export const DEFAULT_RESOLV_CONF = "/etc/resolv.conf"

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

const bindTcp = (host: string, port: number, connections: Set<Socket>, onConnection: (socket: Socket) => void) =>
  Effect.acquireRelease(
    Effect.async<Server, DnsProxyError>((resume) => {
      const server = createServer((socket) => {
        connections.add(socket)
        socket.on("close", () => connections.delete(socket))
        onConnection(socket)
      })
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
    const metrics = yield* dnsMetrics
    const runtime = yield* Effect.runtime<never>()
    const runForward = yield* FiberSet.makeRuntime<never, void, never>()
    const logDebug = (message: string) => Runtime.runFork(runtime)(Effect.logDebug(message).pipe(withScope("dns")))

    // replaced whole on each NDS response; read by the socket callbacks
    let table: LookupTable | undefined
    let rotation = 0

    const forward = (bytes: Buffer, decision: Extract<Decision, { _tag: "Forward" }>, transport: Transport) =>
      Effect.gen(function* () {
        metrics.upstreamRequests.inc()
        const [elapsed, reply] = yield* Effect.timed(
          forwardQuery(upstream, bytes, transport).pipe(
            Effect.map((r) => fitReply(r, decision.limit)),
            Effect.catchAll((e) =>
              Effect.sync(() => metrics.upstreamFailures.inc()).pipe(
                Effect.zipRight(Effect.logInfo(`no upstream answered ${decision.name}: ${e.reason}`)),
                Effect.as(failureReply(decision.query, Rcode.SERVFAIL)),
              ),
            ),
          ),
        )
        metrics.upstreamDuration.observe(Duration.toMillis(elapsed) / 1000)
        return reply
      }).pipe(withScope("dns"))

    /** Answers one query; `reply` sends the answer back where it came from. */
    const handle = (bytes: Buffer, transport: Transport, reply: (response: Buffer) => void) => {
      metrics.requests.inc()
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
        case "Forward":
          runForward(Effect.map(forward(bytes, decision, transport), reply))
          return
      }
    }

    const onTcpConnection = (socket: Socket) => {
      let pending: Buffer = Buffer.alloc(0)
      socket.setTimeout(tcpIdleMillis, () => socket.destroy())
      socket.on("error", (e) => logDebug(`tcp client: ${e.message}`))
      socket.on("data", (chunk) => {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
        // several queries may arrive on one connection, pipelined; answers go out as they are ready
        while (pending.length >= 2) {
          const size = pending.readUInt16BE(0)
          if (pending.length < 2 + size) break
          const query = pending.subarray(2, 2 + size)
          pending = pending.subarray(2 + size)
          handle(query, "tcp", (response) => {
            if (socket.writable) socket.write(frame(response))
          })
        }
      })
    }

    const connections = new Set<Socket>()
    let port = listen.port
    const bindBoth = (host: string) =>
      Effect.gen(function* () {
        const udp = yield* bindUdp(host, port)
        port = udp.address().port
        udp.on("message", (bytes, from) =>
          handle(bytes, "udp", (response) => {
            try {
              udp.send(response, from.port, from.address)
            } catch {
              // the socket closed (shutdown) while a forwarded answer was on its way
            }
          }),
        )
        yield* bindTcp(host, port, connections, onTcpConnection)
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
