/**
 * ADS streams over raw HTTP/2, for tests of peers a gRPC library would not let us be: one that
 * never reads (a receive window of 0), one that writes faster than the server reads.
 */
import * as http2 from "node:http2"
import { loadXdsProtos } from "../../src/layers/xds/protos.js"

export type AdsMethod = "StreamAggregatedResources" | "DeltaAggregatedResources"

const methods = loadXdsProtos().ads as unknown as Record<
  AdsMethod,
  { readonly requestSerialize: (value: object) => Buffer }
>

/** One gRPC message frame: uncompressed flag, big-endian length, the message. */
export const adsFrame = (method: AdsMethod, message: object): Buffer => {
  const body = methods[method].requestSerialize(message)
  const head = Buffer.alloc(5)
  head.writeUInt32BE(body.length, 1)
  return Buffer.concat([head, body])
}

/**
 * An HTTP/2 connection to `port`; with `reads: false` its streams' receive windows are 0 and
 * never grow, so the server can send them nothing but headers.
 */
export const rawSession = (port: number, options: { readonly reads: boolean }): http2.ClientHttp2Session => {
  const session = http2.connect(`http://127.0.0.1:${port}`, {
    ...(options.reads ? {} : { settings: { initialWindowSize: 0 } }),
  })
  session.on("error", () => undefined)
  return session
}

export interface RawOutcome {
  /** grpc-status of the trailers (or trailers-only headers); undefined when reset or cut. */
  readonly grpcStatus: number | undefined
  readonly message: string
  /** Response bytes received. */
  readonly bytes: number
  /** RST_STREAM code, 0 when the stream ended normally. */
  readonly rstCode: number
}

export interface RawStream {
  readonly stream: http2.ClientHttp2Stream
  readonly closed: Promise<RawOutcome>
  /** Writes a request frame; resolves once it is flushed (false if the stream closed first). */
  readonly send: (message: object) => Promise<boolean>
}

export const openRawStream = (session: http2.ClientHttp2Session, method: AdsMethod): RawStream => {
  const stream = session.request({
    ":method": "POST",
    ":path": `/envoy.service.discovery.v3.AggregatedDiscoveryService/${method}`,
    "content-type": "application/grpc",
    te: "trailers",
  })
  let grpcStatus: number | undefined
  let message = ""
  let bytes = 0
  const status = (headers: http2.IncomingHttpHeaders) => {
    if (headers["grpc-status"] === undefined) return
    grpcStatus = Number(headers["grpc-status"])
    if (typeof headers["grpc-message"] === "string") message = decodeURIComponent(headers["grpc-message"])
    // The call is over: end our side too, as a gRPC client does.
    if (!stream.closed) stream.close()
  }
  stream.on("response", status)
  stream.on("trailers", status)
  stream.on("data", (chunk: Buffer) => {
    bytes += chunk.length
  })
  stream.on("error", () => undefined)
  const closed = new Promise<RawOutcome>((resolve) => {
    stream.on("close", () => resolve({ grpcStatus, message, bytes, rstCode: stream.rstCode ?? 0 }))
  })
  const send = (request: object) =>
    new Promise<boolean>((resolve) => {
      if (stream.closed || stream.destroyed) return resolve(false)
      stream.write(adsFrame(method, request), (error) => resolve(error === undefined || error === null))
    })
  return { stream, closed, send }
}
