/**
 * Bounded graceful close of a Node HTTP or HTTPS server. Node's own `close` waits for every
 * connection to end, and neither `closeIdleConnections` nor `closeAllConnections` sees a
 * connection whose request head is still trickling in (slowloris) or, over TLS, one whose
 * handshake never finished: one stuck client kept the listener, and the process, from stopping.
 *
 * So the server's connections are tracked from the TCP accept on, with the requests each has in
 * a handler. At close the server stops accepting and every connection with no request in a
 * handler is closed at once (idle keep-alive, unfinished request heads, unfinished TLS
 * handshakes): nobody waits for an answer on them. Requests in flight may finish until the
 * drain time ends, each response closing its connection; whatever is still open then is
 * destroyed.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Server, Socket } from "node:net"
import { Duration, Effect } from "effect"

/** How long requests in flight may finish at shutdown when the program set no countdown. */
export const DEFAULT_DRAIN = Duration.seconds(5)

/** Node's timers take at most this many milliseconds; a longer delay would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1

export interface ConnectionDrain {
  /**
   * Stops accepting, closes connections with no request in a handler, lets requests in flight
   * finish for `drainTime` (asked when the close starts), then destroys what is left.
   * Resolves once every connection is closed.
   */
  readonly close: (drainTime: Effect.Effect<Duration.Duration>) => Effect.Effect<void>
  /** Stops accepting and destroys every connection now; returns how many were open. */
  readonly closeNow: Effect.Effect<number>
  /** Connections open now (accepted, not yet closed). */
  readonly open: () => number
}

/**
 * A connection's peer address: the same for the TCP socket and the TLS socket wrapped around it,
 * and unique among one listener's open connections.
 */
const peerOf = (socket: Socket): string | undefined =>
  socket.remoteAddress === undefined ? undefined : `${socket.remoteAddress}|${socket.remotePort}`

/**
 * Tracks `server`'s connections; call before it listens. Works for `http.Server` and
 * `https.Server`: the latter emits the TCP socket on `connection` (before any handshake) while
 * its requests carry the TLS socket, so requests are matched to connections by peer address.
 */
export const trackConnections = (server: Server): ConnectionDrain => {
  /** Accepted TCP sockets not yet closed, with their peer. */
  const open = new Map<Socket, string | undefined>()
  /** Responses not yet closed, per peer: the requests a connection has in a handler. */
  const inFlight = new Map<string, Set<ServerResponse>>()
  let draining = false
  let allClosed: (() => void) | undefined

  server.on("connection", (tcp: Socket) => {
    if (draining) {
      tcp.destroy()
      return
    }
    open.set(tcp, peerOf(tcp))
    tcp.once("close", () => {
      open.delete(tcp)
      if (open.size === 0) allClosed?.()
    })
  })
  // First, so the close header is set before any handler writes its head.
  server.prependListener("request", (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket
    const peer = peerOf(socket)
    // Already closed: nothing to keep open for it.
    if (peer === undefined) return
    const responses = inFlight.get(peer) ?? new Set<ServerResponse>()
    inFlight.set(peer, responses.add(res))
    if (draining) res.setHeader("connection", "close")
    res.once("close", () => {
      responses.delete(res)
      if (responses.size > 0) return
      if (inFlight.get(peer) === responses) inFlight.delete(peer)
      // Its head may have promised keep-alive before the drain began: end the connection
      // once what it was sent is flushed.
      if (draining && !socket.destroyed) socket.end()
    })
  })

  const close = (drainTime: Effect.Effect<Duration.Duration>) =>
    Effect.flatMap(drainTime, (time) =>
      Effect.async<void>((resume) => {
        draining = true
        if (server.listening) server.close()
        for (const [tcp, peer] of open) if (peer === undefined || !inFlight.has(peer)) tcp.destroy()
        // Responses still to start their head tell the client the connection ends with them.
        for (const responses of inFlight.values())
          for (const res of responses) if (!res.headersSent) res.setHeader("connection", "close")
        // Sockets destroyed above are removed on their `close`, a turn later.
        if ([...open.keys()].every((tcp) => tcp.destroyed)) return resume(Effect.void)
        // Finalizers are uninterruptible, so a timeout raced against this wait could never win:
        // the force timer lives here.
        const done = () => {
          allClosed = undefined
          clearTimeout(timer)
          resume(Effect.void)
        }
        const timer = setTimeout(
          () => {
            for (const tcp of open.keys()) tcp.destroy()
            done()
          },
          Math.min(MAX_TIMER_MS, Duration.toMillis(time)),
        )
        allClosed = done
      }),
    )

  const closeNow = Effect.sync(() => {
    draining = true
    if (server.listening) server.close()
    const count = [...open.keys()].filter((tcp) => !tcp.destroyed).length
    for (const tcp of open.keys()) tcp.destroy()
    return count
  })

  return { close, closeNow, open: () => open.size }
}

/** `closeNow`, with a line saying what was cut (at the end of the shutdown countdown). */
export const closeLeftovers = (name: string, connections: ConnectionDrain): Effect.Effect<void> =>
  Effect.flatMap(connections.closeNow, (count) =>
    count === 0
      ? Effect.void
      : Effect.logInfo(`${name}: closing ${count} connection(s) still open when the shutdown drain ended`),
  )
