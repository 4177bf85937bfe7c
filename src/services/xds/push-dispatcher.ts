/**
 * Runs the push queue with at most `PILOT_PUSH_THROTTLE` connection pushes in flight: a push
 * starts as soon as it is enqueued while fewer are in flight, and each completed push (its
 * responses handed to HTTP/2) starts the next waiting one. Synchronous and callback-driven: a
 * push to N connections costs N calls of `start`, not N fiber hops.
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

export const makePushDispatcher = <C>(
  throttle: number,
  start: StartPush<C>,
  onDefect: (connection: C, defect: unknown) => void,
): PushDispatcher<C> => {
  const queue = makePushQueue<C>()
  let inFlight = 0
  let pumping = false
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

  /** Starts waiting pushes while slots are free; a `done` inside a `start` only frees its slot. */
  const pump = () => {
    if (pumping) return
    pumping = true
    try {
      while (inFlight < throttle) {
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
