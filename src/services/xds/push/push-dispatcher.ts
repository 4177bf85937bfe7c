/**
 * Runs the push queue with at most `PILOT_PUSH_THROTTLE` connection pushes in flight: a push
 * starts as soon as it is enqueued while fewer are in flight, and each completed push (its
 * responses handed to HTTP/2) starts the next waiting one. Synchronous and callback-driven: a
 * push to N connections costs N calls of `start`, not N fiber hops.
 *
 * Pushes are started in slices of `sliceMillis` of work per turn of the event loop: HTTP/2
 * sends what was written only when the loop turns, so a push to many connections that ran to
 * the end in one go would hold back the first proxies' responses (and every incoming request)
 * until the last connection's were built. After a slice, the rest waits for `defer`.
 */
import { makePushQueue } from "./push-queue.js"
import type { PushRequest } from "./push-request.js"

/**
 * Starts one connection's push; calls `done` once when it completed (possibly before
 * returning). A start that throws counts as done and is reported to `onDefect`.
 */
export type StartPush<C> = (connection: C, request: PushRequest, done: () => void) => void

export interface PushDispatcher<C> {
  readonly enqueue: (connection: C, request: PushRequest) => void
  /**
   * Drops a connection (disconnected): its pending request is discarded, and a push of it in
   * flight counts as completed (a closed stream may never call back).
   */
  readonly remove: (connection: C) => void
  /** Connections waiting for a free slot. */
  readonly pending: () => number
  /** Pushes started and not completed. */
  readonly inFlight: () => number
}

export interface PushSlicing {
  /** Work (ms of `now`) per turn of the event loop. */
  readonly sliceMillis: number
  /** A monotonic clock in milliseconds (`performance.now`). */
  readonly now: () => number
  /** Runs a function on the next turn of the event loop, after pending I/O (`setImmediate`). */
  readonly defer: (next: () => void) => void
}

export const makePushDispatcher = <C>(
  throttle: number,
  start: StartPush<C>,
  onDefect: (connection: C, defect: unknown) => void,
  slicing: PushSlicing,
): PushDispatcher<C> => {
  const queue = makePushQueue<C>()
  let inFlight = 0
  let pumping = false
  /** When this turn's slice began; undefined until a push starts in this turn. */
  let sliceStart: number | undefined
  /** Whether this turn's slice still has room (the first call of a turn opens the slice). */
  const sliceOpen = (): boolean => {
    if (sliceStart === undefined) {
      sliceStart = slicing.now()
      slicing.defer(() => {
        sliceStart = undefined
        pump()
      })
      return true
    }
    return slicing.now() - sliceStart < slicing.sliceMillis
  }
  /** The `done` of each connection's push in flight. */
  const running = new Map<C, () => void>()

  const run = (connection: C, request: PushRequest) => {
    let finished = false
    const done = () => {
      if (finished) return
      finished = true
      inFlight--
      if (running.get(connection) === done) running.delete(connection)
      queue.markDone(connection)
      pump()
    }
    inFlight++
    running.set(connection, done)
    try {
      start(connection, request, done)
    } catch (defect) {
      onDefect(connection, defect)
      done()
    }
  }

  /**
   * Starts waiting pushes while slots are free and this turn's slice lasts (the next turn goes
   * on); a `done` inside a `start` only frees its slot.
   */
  const pump = () => {
    if (pumping) return
    pumping = true
    try {
      while (inFlight < throttle && queue.pending() > 0 && sliceOpen()) {
        const next = queue.take()
        if (next === undefined) break
        run(next[0], next[1])
      }
    } finally {
      pumping = false
    }
  }

  return {
    enqueue: (connection, request) => {
      queue.enqueue(connection, request)
      pump()
    },
    remove: (connection) => {
      queue.remove(connection)
      running.get(connection)?.()
    },
    pending: () => queue.pending(),
    inFlight: () => inFlight,
  }
}
