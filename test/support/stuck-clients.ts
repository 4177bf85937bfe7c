/**
 * Clients that hold a server's connection open without ever finishing anything, for shutdown
 * tests: a slowloris (request headers trickling in, never complete), a body that never arrives
 * after its headers, and a TLS handshake that never starts. Each resolves once its connection is
 * established and its first bytes are flushed, and reports when the server closed it.
 */
import { connect as netConnect, type Socket } from "node:net"
import { connect as tlsConnect } from "node:tls"

export interface StuckClient {
  readonly name: string
  /** Resolves when the server closed (or reset) the connection. */
  readonly closed: Promise<void>
  /** Ends the client (test cleanup). */
  readonly destroy: () => void
}

/** How often a slowloris sends one more header line: often enough to never look idle. */
const TRICKLE_MS = 300

const opened = (name: string, socket: Socket, ready: "connect" | "secureConnect", first: string) =>
  new Promise<{ socket: Socket; closed: Promise<void> }>((resolve, reject) => {
    const closed = new Promise<void>((done) => socket.once("close", () => done()))
    socket.on("error", () => undefined)
    socket.on("data", () => undefined)
    const onClose = () => reject(new Error(`${name}: closed before it was established`))
    socket.once("close", onClose)
    socket.once(ready, () => {
      const flushed = () => {
        socket.off("close", onClose)
        resolve({ socket, closed })
      }
      if (first === "") flushed()
      else socket.write(first, flushed)
    })
  })

const tcpOrTls = (port: number, tls: boolean): { socket: Socket; ready: "connect" | "secureConnect" } =>
  tls
    ? { socket: tlsConnect({ host: "127.0.0.1", port, rejectUnauthorized: false }), ready: "secureConnect" }
    : { socket: netConnect({ host: "127.0.0.1", port }), ready: "connect" }

/** Request headers sent a line at a time, forever: the request never reaches a handler. */
export const slowloris = async (name: string, port: number, options: { tls?: boolean } = {}): Promise<StuckClient> => {
  const { socket, ready } = tcpOrTls(port, options.tls === true)
  const { closed } = await opened(name, socket, ready, "GET /ready HTTP/1.1\r\nHost: 127.0.0.1\r\n")
  let n = 0
  const timer = setInterval(() => {
    if (!socket.destroyed) socket.write(`X-Trickle-${n++}: a\r\n`)
  }, TRICKLE_MS)
  void closed.then(() => clearInterval(timer))
  return {
    name,
    closed,
    destroy: () => {
      clearInterval(timer)
      socket.destroy()
    },
  }
}

/**
 * A complete request head announcing a body that never comes (a few bytes of it are sent): the
 * request is in its handler, which waits for the rest. The head asks for `100 Continue`, which
 * the server sends as it hands the request to its handler: resolves once that came.
 */
export const stalledBody = async (
  name: string,
  port: number,
  request: {
    readonly method: string
    readonly path: string
    readonly tls?: boolean
    /** The announced body length (default 100,000): below the handler's limit, or it refuses at once. */
    readonly contentLength?: number
  },
): Promise<StuckClient> => {
  const { socket, ready } = tcpOrTls(port, request.tls === true)
  let received = ""
  const continued = new Promise<void>((resolve, reject) => {
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString("latin1")
      if (received.startsWith("HTTP/1.1 100")) resolve()
      else if (received.includes("\r\n")) reject(new Error(`${name}: answered ${received.split("\r\n")[0]}`))
    })
    socket.once("close", () => reject(new Error(`${name}: closed before 100 Continue`)))
  })
  void continued.catch(() => undefined)
  const head = `${request.method} ${request.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${request.contentLength ?? 100_000}\r\nExpect: 100-continue\r\n\r\n`
  const { closed } = await opened(name, socket, ready, head)
  await continued
  socket.write('{"a":')
  return { name, closed, destroy: () => socket.destroy() }
}

/** A TCP connection to a TLS port that never sends its ClientHello. */
export const stalledHandshake = async (name: string, port: number): Promise<StuckClient> => {
  const { closed, socket } = await opened(name, netConnect({ host: "127.0.0.1", port }), "connect", "")
  return { name, closed, destroy: () => socket.destroy() }
}
