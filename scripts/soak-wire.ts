/**
 * What the hardening soak's parts share (soak-hardening.ts, soak-control-plane.ts,
 * soak-agent.ts): ADS frames and raw HTTP/2 streams a gRPC library would not let a client be,
 * clients that hold a connection without ever finishing (for the shutdown measurements), a
 * process's memory from /proc, and small helpers. Loopback only. Built as a script entry of its
 * own, it does nothing when run.
 */
import { readFileSync } from "node:fs"
import * as http2 from "node:http2"
import { createServer, connect as netConnect, type Socket } from "node:net"
import { connect as tlsConnect } from "node:tls"
import { loadXdsProtos } from "../src/layers/xds/protos.js"

export const MiB = 1024 * 1024
export const ADS_PATH = "/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources"
export const DELTA_PATH = "/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources"

export const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export const round1 = (x: number) => Math.round(x * 10) / 10

export const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

export const statusCounts = (codes: ReadonlyArray<number | string | undefined>) => {
  const out: Record<string, number> = {}
  for (const code of codes) out[String(code ?? "none")] = (out[String(code ?? "none")] ?? 0) + 1
  return out
}

export const percentile = (xs: ReadonlyArray<number>, p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0
}

// ------------------------------------------------------------------------------------------------
// Memory

/** VmHWM (peak) and VmRSS of a live process in MiB; undefined once it is gone. */
export const memoryOf = (pid: number): { peak: number; now: number } | undefined => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) / 1024
    return { peak: field("VmHWM"), now: field("VmRSS") }
  } catch {
    return undefined
  }
}

const SAMPLE_MS = 100
const TIMELINE_MS = 2500

export interface MemoryWatch {
  /** The highest VmHWM read (it cannot be read after the process exits, so it is sampled). */
  readonly peakMiB: () => number
  /** When the guard killed the process (ms since the watch began), or undefined. */
  readonly killedAfterMs: () => number | undefined
  /** VmRSS in MiB every TIMELINE_MS since the watch began (rounded), to see what grew it when. */
  readonly timelineMiB: () => ReadonlyArray<number>
  readonly stop: () => void
}

/**
 * Samples a process's peak RSS every SAMPLE_MS; past `guardMiB` it is killed (SIGKILL), so a build
 * without the bounds cannot take the shared machine's memory: the soak then reports it.
 */
export const watchMemory = (pid: number, guardMiB: number): MemoryWatch => {
  const started = Date.now()
  let peak = 0
  let killedAfter: number | undefined
  const timeline: Array<number> = []
  let samples = 0
  const sample = () => {
    const memory = memoryOf(pid)
    if (memory === undefined) return
    peak = Math.max(peak, memory.peak)
    // An exiting process reads as 0: not a sample.
    if (samples++ % (TIMELINE_MS / SAMPLE_MS) === 0 && memory.now > 0) timeline.push(Math.round(memory.now))
    if (memory.now > guardMiB && killedAfter === undefined) {
      killedAfter = Date.now() - started
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // already gone
      }
    }
  }
  const timer = setInterval(sample, SAMPLE_MS)
  return {
    peakMiB: () => {
      const memory = memoryOf(pid)
      if (memory !== undefined) peak = Math.max(peak, memory.peak)
      return peak
    },
    killedAfterMs: () => killedAfter,
    timelineMiB: () => timeline,
    stop: () => clearInterval(timer),
  }
}

/** CPU time (user + system) a live process has used, in seconds; NaN once it is gone. */
export const cpuSecondsOf = (pid: number): number => {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return round1((Number(fields[11]) + Number(fields[12])) / 100)
  } catch {
    return Number.NaN
  }
}

// ------------------------------------------------------------------------------------------------
// Raw HTTP/2 ADS streams

type AdsMethod = "StreamAggregatedResources" | "DeltaAggregatedResources"
const ads = loadXdsProtos().ads as unknown as Record<
  AdsMethod,
  { readonly requestSerialize: (value: object) => Buffer }
>

/** One gRPC message frame: uncompressed flag, big-endian length, the message. */
export const frame = (method: AdsMethod, message: object): Buffer => {
  const body = ads[method].requestSerialize(message)
  const head = Buffer.alloc(5)
  head.writeUInt32BE(body.length, 1)
  return Buffer.concat([head, body])
}

export interface RawOutcome {
  readonly grpcStatus: number | undefined
  readonly message: string
  readonly bytes: number
}

export interface RawStream {
  readonly stream: http2.ClientHttp2Stream
  readonly closed: Promise<RawOutcome>
  /** Writes a request frame; resolves once flushed (false if the stream closed first). */
  readonly send: (method: AdsMethod, message: object) => Promise<boolean>
}

/** An ADS stream over `session`; what it read and its final status are reported when it closes. */
export const openRaw = (session: http2.ClientHttp2Session, path: string): RawStream => {
  const stream = session.request({
    ":method": "POST",
    ":path": path,
    "content-type": "application/grpc",
    te: "trailers",
  })
  let bytes = 0
  let grpcStatus: number | undefined
  let message = ""
  const take = (headers: http2.IncomingHttpHeaders) => {
    if (headers["grpc-status"] === undefined) return
    grpcStatus = Number(headers["grpc-status"])
    if (headers["grpc-message"] !== undefined) message = decodeURIComponent(String(headers["grpc-message"]))
    // The call is over (a trailers-only refusal comes while our side is still open): end it, as
    // a gRPC client does.
    if (!stream.closed) stream.close()
  }
  stream.on("response", take)
  stream.on("trailers", take)
  stream.on("data", (chunk: Buffer) => {
    bytes += chunk.length
  })
  stream.on("error", () => undefined)
  const closed = new Promise<RawOutcome>((resolve) => {
    stream.on("close", () => resolve({ grpcStatus, message: message.slice(0, 200), bytes }))
  })
  const send = (method: AdsMethod, request: object) =>
    new Promise<boolean>((resolve) => {
      if (stream.closed || stream.destroyed) return resolve(false)
      stream.write(frame(method, request), (error) => resolve(error === undefined || error === null))
    })
  return { stream, closed, send }
}

/**
 * An HTTP/2 connection to a loopback port or a Unix socket; with `reads: false` its streams'
 * receive windows are 0 and never grow, so the server can send them nothing but headers.
 */
export const rawSession = (
  target: { readonly port: number } | { readonly socketPath: string },
  options: { readonly reads: boolean },
): http2.ClientHttp2Session => {
  const settings = options.reads ? {} : { settings: { initialWindowSize: 0 } }
  const session =
    "port" in target
      ? http2.connect(`http://127.0.0.1:${target.port}`, settings)
      : http2.connect("http://localhost", { ...settings, createConnection: () => netConnect(target.socketPath) })
  session.on("error", () => undefined)
  return session
}

// ------------------------------------------------------------------------------------------------
// Clients that never finish (held across a SIGTERM)

export interface StuckClient {
  readonly name: string
  /** Resolves when the server closed (or reset) the connection. */
  readonly closed: Promise<void>
  readonly destroy: () => void
}

/** How often a slowloris sends one more header line: often enough never to look idle. */
const TRICKLE_MS = 300

const established = (name: string, socket: Socket, ready: "connect" | "secureConnect", first: string) =>
  new Promise<StuckClient>((resolve, reject) => {
    const closed = new Promise<void>((done) => socket.once("close", () => done()))
    socket.on("error", () => undefined)
    socket.on("data", () => undefined)
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`${name}: not established within 10 s`))
    }, 10_000)
    socket.once(ready, () => {
      clearTimeout(timer)
      const done = () => resolve({ name, closed, destroy: () => socket.destroy() })
      if (first === "") done()
      else socket.write(first, done)
    })
    socket.once("close", () => {
      clearTimeout(timer)
      reject(new Error(`${name}: closed before it was established`))
    })
  })

/** Request headers sent a line at a time, never complete: the request never reaches a handler. */
export const slowloris = async (name: string, port: number, tls = false): Promise<StuckClient> => {
  const socket = tls
    ? tlsConnect({ host: "127.0.0.1", port, rejectUnauthorized: false })
    : netConnect({ host: "127.0.0.1", port })
  const client = await established(
    name,
    socket,
    tls ? "secureConnect" : "connect",
    "GET /ready HTTP/1.1\r\nHost: 127.0.0.1\r\n",
  )
  let n = 0
  const timer = setInterval(() => {
    if (!socket.destroyed) socket.write(`X-Trickle-${n++}: a\r\n`)
  }, TRICKLE_MS)
  void client.closed.then(() => clearInterval(timer))
  return {
    ...client,
    destroy: () => {
      clearInterval(timer)
      socket.destroy()
    },
  }
}

/** A TCP connection to a TLS port that never sends its ClientHello. */
export const stalledHandshake = (name: string, port: number): Promise<StuckClient> =>
  established(name, netConnect({ host: "127.0.0.1", port }), "connect", "")

/** A TCP connection that sends `bytes` and nothing more (half a DNS length prefix, say). */
export const stalledBytes = (name: string, port: number, bytes: string): Promise<StuckClient> =>
  established(name, netConnect({ host: "127.0.0.1", port }), "connect", bytes)

/**
 * An ADS stream on a connection whose receive window is 0, asking for clusters: the answer can
 * never be delivered. Resolves once the server answered with headers (or after 5 s).
 */
export const pausedAds = async (
  name: string,
  target: { readonly port: number } | { readonly socketPath: string },
  node: object,
): Promise<StuckClient> => {
  const session = rawSession(target, { reads: false })
  const closed = new Promise<void>((resolve) => session.once("close", () => resolve()))
  const raw = openRaw(session, ADS_PATH)
  const answered = new Promise<void>((resolve) => raw.stream.once("response", () => resolve()))
  await raw.send("StreamAggregatedResources", {
    node,
    type_url: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
  })
  await Promise.race([answered, delay(5000)])
  return { name, closed, destroy: () => session.destroy() }
}

/** Which of `clients` the server closed within `withinMs` of now (names of those it did not). */
export const leftOpen = async (clients: ReadonlyArray<StuckClient>, withinMs: number): Promise<Array<string>> => {
  const open = await Promise.all(
    clients.map((client) => Promise.race([client.closed.then(() => ""), delay(withinMs).then(() => client.name)])),
  )
  for (const client of clients) client.destroy()
  return open.filter((name) => name !== "")
}
