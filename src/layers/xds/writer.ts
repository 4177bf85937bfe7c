/**
 * Writes responses to an ADS stream. `write` hands a response to gRPC at once and calls back
 * when gRPC has taken it (the message is handed to HTTP/2, within the peer's flow-control
 * window): a push to many streams costs no fiber hop per stream.
 *
 * A peer that stops reading never lets a write complete; with `PILOT_XDS_SEND_TIMEOUT` set,
 * such a write ends the stream with DEADLINE_EXCEEDED (the client reconnects and gets full
 * state again), counts `pilot_xds_write_timeout` and logs, instead of holding a push slot
 * forever. The status is queued behind the stuck data; the server forgets the stream at once
 * (its "error" event closes the stream's inbox), and a peer that never reads again is dropped
 * by keepalive.
 */
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect, FiberId, Runtime } from "effect"

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

export interface Writer<T> {
  /**
   * Hands `message` to gRPC now; `onWritten` runs once, when gRPC has taken it, at once when
   * the stream is already closed, or after a timed-out write ended the stream.
   */
  readonly write: (message: T, onWritten: () => void) => void
}

/** A writer for one stream; its send timeouts run on the calling fiber's runtime (and clock). */
export const makeWriter = <T>(call: WritableCall<T>, options: WriterOptions): Effect.Effect<Writer<T>> =>
  Effect.map(Effect.runtime<never>(), (runtime) => {
    const fork = Runtime.runFork(runtime)
    const limited = Duration.greaterThan(options.sendTimeout, Duration.zero)
    const timedOut = Effect.gen(function* () {
      options.onTimeout()
      yield* Effect.logWarning(
        `timeout writing to ${call.getPeer()} after ${Duration.format(options.sendTimeout)}: closing the stream`,
      )
      if (!call.destroyed && !call.writableEnded)
        call.emit("error", { code: grpc.status.DEADLINE_EXCEEDED, details: "timeout sending" })
    })

    const write = (message: T, onWritten: () => void): void => {
      if (call.destroyed || call.writableEnded) {
        onWritten()
        return
      }
      if (!limited) {
        call.write(message, onWritten)
        return
      }
      // Whichever comes first, the write's callback or the timeout, settles the write.
      let settled = false
      const timer = fork(
        Effect.sleep(options.sendTimeout).pipe(
          Effect.zipRight(
            Effect.suspend(() => {
              if (settled) return Effect.void
              settled = true
              return Effect.ensuring(timedOut, Effect.sync(onWritten))
            }),
          ),
        ),
      )
      call.write(message, () => {
        if (settled) return
        settled = true
        timer.unsafeInterruptAsFork(FiberId.none)
        onWritten()
      })
    }

    return { write }
  })
