/**
 * Forwarding a query the table does not answer to the upstream nameservers, over the transport
 * the client used: UDP with a fresh socket per exchange (connected, so only the server's reply
 * is read), TCP with one connection per exchange and 2-byte length framing. With `parallel`
 * (`DNS_FORWARD_PARALLEL`) every server is asked at once and the first reply wins; otherwise one
 * after another, each with its own timeout, until one replies.
 */
import { createSocket } from "node:dgram"
import { connect, isIP } from "node:net"
import { Data, Duration, Effect } from "effect"
import type { Transport } from "../../../services/agent/dns/answer.js"
import type { Upstream } from "../../../services/agent/dns/resolv-conf.js"

export class UpstreamError extends Data.TaggedError("UpstreamError")<{ readonly reason: string }> {}

export interface UpstreamSettings {
  readonly servers: ReadonlyArray<Upstream>
  readonly parallel: boolean
  /** Per exchange with one server. */
  readonly timeout: Duration.Duration
}

const label = (server: Upstream): string =>
  isIP(server.host) === 6 ? `[${server.host}]:${server.port}` : `${server.host}:${server.port}`

const queryId = (query: Buffer): number => query.readUInt16BE(0)

const exchangeUdp = (server: Upstream, query: Buffer): Effect.Effect<Buffer, UpstreamError> =>
  Effect.async<Buffer, UpstreamError>((resume) => {
    const socket = createSocket(isIP(server.host) === 6 ? "udp6" : "udp4")
    let open = true
    const close = () => {
      if (open) {
        open = false
        socket.close()
      }
    }
    const finish = (result: Effect.Effect<Buffer, UpstreamError>) => {
      close()
      resume(result)
    }
    socket.on("error", (e) => finish(Effect.fail(new UpstreamError({ reason: `${label(server)}: ${e.message}` }))))
    socket.on("message", (reply) => {
      // a stray datagram with another id is not the answer (the reply may still come)
      if (reply.length >= 12 && queryId(reply) === queryId(query)) finish(Effect.succeed(reply))
    })
    socket.connect(server.port, server.host, () => {
      if (open) socket.send(query)
    })
    return Effect.sync(close)
  })

const exchangeTcp = (server: Upstream, query: Buffer): Effect.Effect<Buffer, UpstreamError> =>
  Effect.async<Buffer, UpstreamError>((resume) => {
    const socket = connect({ host: server.host, port: server.port })
    let received = Buffer.alloc(0)
    let done = false
    const finish = (result: Effect.Effect<Buffer, UpstreamError>) => {
      if (done) return
      done = true
      socket.destroy()
      resume(result)
    }
    const fail = (reason: string) => finish(Effect.fail(new UpstreamError({ reason: `${label(server)}: ${reason}` })))
    socket.on("connect", () => {
      const length = Buffer.alloc(2)
      length.writeUInt16BE(query.length)
      socket.write(Buffer.concat([length, query]))
    })
    socket.on("data", (chunk) => {
      received = Buffer.concat([received, chunk])
      if (received.length < 2) return
      const size = received.readUInt16BE(0)
      if (received.length < 2 + size) return
      const reply = received.subarray(2, 2 + size)
      if (reply.length >= 12 && queryId(reply) === queryId(query)) finish(Effect.succeed(Buffer.from(reply)))
      else fail("reply with another id")
    })
    socket.on("error", (e) => fail(e.message))
    socket.on("close", () => fail("connection closed before the reply"))
    return Effect.sync(() => {
      done = true
      socket.destroy()
    })
  })

/** One exchange with one server, bounded by the timeout. */
const exchangeOne = (settings: UpstreamSettings, server: Upstream, query: Buffer, transport: Transport) =>
  (transport === "udp" ? exchangeUdp(server, query) : exchangeTcp(server, query)).pipe(
    Effect.timeoutFail({
      duration: settings.timeout,
      onTimeout: () =>
        new UpstreamError({ reason: `${label(server)}: no reply within ${Duration.format(settings.timeout)}` }),
    }),
  )

/**
 * The first reply of the upstream servers to `query`; fails when none replies. Each failed
 * server is reported to `onFailure` (the caller logs it, throttled: a flood of queries to a dead
 * upstream must not become a flood of log lines).
 */
export const forwardQuery = (
  settings: UpstreamSettings,
  query: Buffer,
  transport: Transport,
  onFailure: (e: UpstreamError) => Effect.Effect<void> = () => Effect.void,
): Effect.Effect<Buffer, UpstreamError> => {
  const attempts = settings.servers.map((server) =>
    exchangeOne(settings, server, query, transport).pipe(Effect.tapError(onFailure)),
  )
  const [first, ...rest] = attempts
  if (first === undefined) return Effect.fail(new UpstreamError({ reason: "no upstream nameservers" }))
  if (settings.parallel) return Effect.raceAll([first, ...rest])
  return rest.reduce((chain, next) => Effect.orElse(chain, () => next), first)
}
