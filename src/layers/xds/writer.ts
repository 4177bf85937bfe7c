/**
 * Writes responses to ADS streams. `write` hands a response to gRPC at once and calls back
 * when gRPC has taken it (the message is handed to HTTP/2, within the peer's flow-control
 * window): a push to many streams costs no fiber hop per stream.
 *
 * A peer that stops reading never lets a write complete, and a push waiting for it would hold
 * its `PILOT_PUSH_THROTTLE` slot forever. A write not taken within `PILOT_XDS_SEND_TIMEOUT`
 * (default 5s) ends its stream: `pilot_xds_write_timeout` counts it, a warning names the peer,
 * every write outstanding on the stream calls back (which frees the push slot), the stream is
 * ended with DEADLINE_EXCEEDED and its HTTP/2 stream reset (the status alone would wait behind
 * the stuck data; see stream-reset.ts). The client reconnects and gets full state again.
 *
 * Deadlines are kept in one list per server, in the order the writes started (every write has
 * the same timeout), with one timer for the oldest: a write costs two set operations, not a
 * timer, and a push to thousands of streams arms one timer.
 *
 * Bytes in flight are bounded per server (`budgetBytes`): a response is serialized only when
 * gRPC is handed it, and stays in memory (twice: the message, its HTTP/2 frames) until the peer
 * has read it. A thousand sidecars connecting at once each ask for megabytes of clusters; handed
 * over together, every answer would sit in HTTP/2 buffers while the peers, on the same cores,
 * slowly read them. Over the budget, writes wait in one first-in first-out line (so a stream's
 * responses keep their order) holding only the response object, whose resources the cache
 * shares; each completed write lets the next ones go. One write always goes when nothing is in
 * flight, however large. The send timeout runs from the hand-over, not from the wait.
 */
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect, FiberSet, type Scope } from "effect"
import { resetStream } from "./stream-reset.js"

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
  /** Called once per stream ended by a timed-out write (the metric). */
  readonly onTimeout: () => void
  /** Frees a timed-out stream's HTTP/2 stream; default: `resetStream`. */
  readonly reset?: (call: WritableCall<never>) => void
  /** Writes the warning about a timed-out stream; default: a warning line each. */
  readonly warn?: (message: string) => Effect.Effect<void>
  /** Bytes handed to gRPC and not yet taken by the peers, at most (beyond one write); default: no limit. */
  readonly budgetBytes?: number
}

export interface Writer<T> {
  /**
   * Hands `message` (`size` bytes once serialized, near enough; default 0) to gRPC now, or
   * once the budget has room; `onWritten` runs once, when gRPC has taken it, at once when the
   * stream is already closed, or when a timed-out write ended the stream.
   */
  readonly write: (message: T, onWritten: () => void, size?: number) => void
}

interface Outstanding {
  readonly deadline: number
  readonly stream: StreamWrites
  readonly onWritten: () => void
}

/** A write waiting for room in the budget. */
interface Waiting {
  readonly size: number
  readonly start: () => void
}

interface StreamWrites {
  readonly pending: Set<Outstanding>
  timedOut: boolean
}

/**
 * Writers sharing one deadline list; timers run on the calling fiber's runtime (and clock) and
 * end with the scope.
 */
export const makeWriters = (
  options: WriterOptions,
): Effect.Effect<<T>(call: WritableCall<T>) => Writer<T>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const fork = yield* FiberSet.makeRuntime<never>()
    const clock = yield* Effect.clock
    const timeoutMillis = Duration.toMillis(options.sendTimeout)
    const limited = timeoutMillis > 0 && Number.isFinite(timeoutMillis)
    const reset = options.reset ?? resetStream
    const warn = options.warn ?? Effect.logWarning
    /** Outstanding writes of every stream, oldest (earliest deadline) first. */
    const outstanding = new Set<Outstanding>()
    let armed = false

    const settle = (entry: Outstanding) => {
      outstanding.delete(entry)
      entry.stream.pending.delete(entry)
      entry.onWritten()
    }

    const expire = <T>(call: WritableCall<T>, stream: StreamWrites) => {
      stream.timedOut = true
      options.onTimeout()
      fork(
        warn(`timeout writing to ${call.getPeer()} after ${Duration.format(options.sendTimeout)}: closing the stream`),
      )
      if (!call.destroyed && !call.writableEnded)
        call.emit("error", { code: grpc.status.DEADLINE_EXCEEDED, details: "timeout sending" })
      reset(call as WritableCall<never>)
      // Every write the stream still holds is over: their pushes free their slots now.
      for (const entry of [...stream.pending]) settle(entry)
    }

    const calls = new WeakMap<StreamWrites, WritableCall<unknown>>()
    const sweep = () => {
      armed = false
      const now = clock.unsafeCurrentTimeMillis()
      for (const entry of outstanding) {
        if (entry.deadline > now) break
        expire(calls.get(entry.stream)!, entry.stream)
      }
      arm()
    }
    const arm = () => {
      if (armed) return
      const oldest = outstanding.values().next()
      if (oldest.done === true) return
      armed = true
      const wait = Math.max(0, oldest.value.deadline - clock.unsafeCurrentTimeMillis())
      fork(Effect.sleep(Duration.millis(wait)).pipe(Effect.zipRight(Effect.sync(sweep))))
    }

    const budget = options.budgetBytes !== undefined && options.budgetBytes > 0 ? options.budgetBytes : Infinity
    let inFlightBytes = 0
    const waiting: Array<Waiting> = []
    let draining = false
    const hasRoom = (size: number) => inFlightBytes === 0 || inFlightBytes + size <= budget
    /** Starts the waiting writes the budget has room for, oldest first. */
    const drain = () => {
      // A write that completes at once (a closed stream) drains again from inside `start`.
      if (draining) return
      draining = true
      while (waiting.length > 0 && hasRoom(waiting[0]!.size)) waiting.shift()!.start()
      draining = false
    }

    return <T>(call: WritableCall<T>): Writer<T> => {
      const stream: StreamWrites = { pending: new Set(), timedOut: false }
      calls.set(stream, call as WritableCall<unknown>)
      const closed = () => stream.timedOut || call.destroyed || call.writableEnded
      const start = (message: T, onWritten: () => void, size: number): void => {
        if (closed()) {
          onWritten()
          return
        }
        inFlightBytes += size
        let released = false
        const written = () => {
          if (released) return
          released = true
          inFlightBytes -= size
          onWritten()
          drain()
        }
        if (!limited) {
          call.write(message, written)
          return
        }
        const entry: Outstanding = {
          deadline: clock.unsafeCurrentTimeMillis() + timeoutMillis,
          stream,
          onWritten: written,
        }
        outstanding.add(entry)
        stream.pending.add(entry)
        call.write(message, () => {
          // Settled already when the stream timed out.
          if (stream.pending.has(entry)) settle(entry)
        })
        arm()
      }
      const write = (message: T, onWritten: () => void, size = 0): void => {
        if (closed()) {
          onWritten()
          return
        }
        if (waiting.length === 0 && hasRoom(size)) {
          start(message, onWritten, size)
          return
        }
        waiting.push({ size, start: () => start(message, onWritten, size) })
      }
      return { write }
    }
  })

/** A writer for one stream (see `makeWriters`). */
export const makeWriter = <T>(
  call: WritableCall<T>,
  options: WriterOptions,
): Effect.Effect<Writer<T>, never, Scope.Scope> => Effect.map(makeWriters(options), (writerOf) => writerOf(call))
