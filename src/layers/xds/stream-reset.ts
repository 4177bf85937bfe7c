/**
 * Ending ADS streams whose peer stopped reading. Ending a grpc-js server call queues its status
 * behind what was written, and a peer that never reads (a receive window of 0) never lets that
 * through: the call, its HTTP/2 stream and the responses buffered in it would then live as long
 * as the connection, and a graceful server shutdown would wait for them. Such a stream is reset
 * (RST_STREAM CANCEL) instead, which frees it at once.
 */
import * as http2 from "node:http2"
import { Effect } from "effect"

/** The part of a grpc-js server call that ending it uses. */
export interface EndableCall {
  readonly writableEnded: boolean
  readonly writableFinished: boolean
  readonly end: () => unknown
  readonly once: (event: "finish" | "close", listener: () => void) => unknown
}

const isHttp2Stream = (value: unknown): value is http2.Http2Stream =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as { close?: unknown }).close === "function" &&
  "rstCode" in value &&
  "session" in value

/**
 * The HTTP/2 stream under a grpc-js server call. grpc-js (1.x) offers no public way to reset a
 * call, so it is reached through the call chain grpc-js builds: the surface call's `call`, each
 * intercepting call's `nextCall`, down to the base call's `stream`. Undefined when that layout
 * changes (the stream is then only ended, as before).
 */
const http2StreamOf = (call: unknown): http2.Http2Stream | undefined => {
  let link: unknown = typeof call === "object" && call !== null ? (call as { call?: unknown }).call : undefined
  for (let depth = 0; depth < 8 && typeof link === "object" && link !== null; depth++) {
    const stream = (link as { stream?: unknown }).stream
    if (isHttp2Stream(stream)) return stream
    link = (link as { nextCall?: unknown }).nextCall
  }
  return undefined
}

/** Resets the HTTP/2 stream of a grpc-js server call; whether there was one to reset. */
export const resetStream = (call: unknown): boolean => {
  const stream = http2StreamOf(call)
  if (stream === undefined || stream.destroyed || stream.closed) return false
  stream.close(http2.constants.NGHTTP2_CANCEL)
  return true
}

/**
 * Ends every call (its status goes out after what it wrote); a call whose peer has not taken
 * everything within `graceMillis` is reset. Completes once every call finished or was reset.
 */
export const endOrReset = (calls: Iterable<EndableCall>, graceMillis: number): Effect.Effect<number> =>
  Effect.async<number>((resume) => {
    const waiting = new Set<EndableCall>()
    let timer: ReturnType<typeof setTimeout> | undefined
    const settle = (call: EndableCall) => {
      if (!waiting.delete(call) || waiting.size > 0) return
      if (timer !== undefined) clearTimeout(timer)
      resume(Effect.succeed(0))
    }
    for (const call of calls) {
      if (!call.writableEnded) call.end()
      if (call.writableFinished) continue
      waiting.add(call)
      call.once("finish", () => settle(call))
      call.once("close", () => settle(call))
    }
    if (waiting.size === 0) return resume(Effect.succeed(0))
    timer = setTimeout(() => {
      let reset = 0
      for (const call of waiting) if (resetStream(call)) reset++
      waiting.clear()
      resume(Effect.succeed(reset))
    }, graceMillis)
  })
