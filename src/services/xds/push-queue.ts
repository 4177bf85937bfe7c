/**
 * The push queue: at most one pending push request per connection. A request for a connection
 * that already waits is merged into the waiting one; a request for a connection being pushed
 * right now is held and re-queued when that push is marked done. Workers take connections in
 * arrival order.
 */
import { Effect, Queue } from "effect"
import { mergePushRequest, type PushRequest } from "./push-request.js"

export interface PushQueue<C> {
  readonly enqueue: (connection: C, request: PushRequest) => Effect.Effect<void>
  /** Waits for the next connection with a pending request; marks it processing. */
  readonly dequeue: Effect.Effect<readonly [C, PushRequest]>
  /** Ends processing of a connection; a request merged meanwhile is queued again. */
  readonly markDone: (connection: C) => Effect.Effect<void>
  /** Drops a connection (disconnected): its pending request is discarded. */
  readonly remove: (connection: C) => Effect.Effect<void>
  /** Connections waiting (not counting those being processed). */
  readonly pending: Effect.Effect<number>
}

export const makePushQueue = <C>(): Effect.Effect<PushQueue<C>> =>
  Effect.gen(function* () {
    const ready = yield* Queue.unbounded<C>()
    const pending = new Map<C, PushRequest>()
    // connection → request merged while it was being processed (undefined = none)
    const processing = new Map<C, PushRequest | undefined>()

    const enqueue = (connection: C, request: PushRequest) =>
      Effect.suspend(() => {
        if (processing.has(connection)) {
          const held = processing.get(connection)
          processing.set(connection, held === undefined ? request : mergePushRequest(held, request))
          return Effect.void
        }
        const waiting = pending.get(connection)
        if (waiting !== undefined) {
          pending.set(connection, mergePushRequest(waiting, request))
          return Effect.void
        }
        pending.set(connection, request)
        return Queue.offer(ready, connection).pipe(Effect.asVoid)
      })

    const dequeue: Effect.Effect<readonly [C, PushRequest]> = Queue.take(ready).pipe(
      Effect.flatMap((connection) => {
        const request = pending.get(connection)
        if (request === undefined) return dequeue // removed while queued
        pending.delete(connection)
        processing.set(connection, undefined)
        return Effect.succeed([connection, request] as const)
      }),
    )

    const markDone = (connection: C) =>
      Effect.suspend(() => {
        const held = processing.get(connection)
        processing.delete(connection)
        return held === undefined ? Effect.void : enqueue(connection, held)
      })

    const remove = (connection: C) =>
      Effect.sync(() => {
        pending.delete(connection)
        processing.delete(connection)
      })

    return { enqueue, dequeue, markDone, remove, pending: Effect.sync(() => pending.size) }
  })
