/**
 * Writes one response to an ADS stream and waits until gRPC has taken it (the write callback:
 * the message is handed to HTTP/2, within the peer's flow-control window). A peer that stops
 * reading never lets that happen; with `PILOT_XDS_SEND_TIMEOUT` set, such a write ends the
 * stream with DEADLINE_EXCEEDED (the client reconnects and gets full state again), counts
 * `pilot_xds_write_timeout` and logs, instead of holding a push worker forever. The status is
 * queued behind the stuck data; the server forgets the stream at once (its "error" event closes
 * the stream's inbox), and a peer that never reads again is dropped by keepalive.
 */
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect, Option } from "effect"

/** The part of a grpc-js server stream a writer uses. */
export interface WritableCall<T> {
  readonly destroyed: boolean
  readonly writableEnded: boolean
  readonly write: (message: T, callback: () => void) => unknown
  readonly emit: (event: "error", status: Partial<grpc.StatusObject>) => unknown
  readonly getPeer: () => string
}

export interface WriterOptions {
  /** 0 (or less) waits without a limit. */
  readonly sendTimeout: Duration.Duration
  /** Called once per timed-out write (the metric). */
  readonly onTimeout: () => void
}

/** `send(message)` for one stream: completes once written, or after ending a stream that timed out. */
export const makeWriter =
  <T>(call: WritableCall<T>, options: WriterOptions) =>
  (message: T): Effect.Effect<void> => {
    const write = Effect.async<void>((resume) => {
      if (call.destroyed || call.writableEnded) return resume(Effect.void)
      call.write(message, () => resume(Effect.void))
    })
    if (!Duration.greaterThan(options.sendTimeout, Duration.zero)) return write
    return write.pipe(
      Effect.timeoutOption(options.sendTimeout),
      Effect.flatMap(
        Option.match({
          onSome: () => Effect.void,
          onNone: () =>
            Effect.gen(function* () {
              options.onTimeout()
              yield* Effect.logWarning(
                `timeout writing to ${call.getPeer()} after ${Duration.format(options.sendTimeout)}: closing the stream`,
              )
              if (!call.destroyed && !call.writableEnded)
                call.emit("error", { code: grpc.status.DEADLINE_EXCEEDED, details: "timeout sending" })
            }),
        }),
      ),
    )
  }
