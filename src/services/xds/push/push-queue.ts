/**
 * The push queue: at most one pending push request per connection. A request for a connection
 * that already waits is merged into the waiting one (keeping its place); a request for a
 * connection being pushed right now is held and queued again when that push is marked done.
 * Connections are taken in arrival order. Synchronous: the push dispatcher drives it from the
 * push itself and from write completions, with no fiber hop per connection.
 */
import { mergePushRequest, type PushRequest } from "./push-request.js"

export interface PushQueue<C> {
  readonly enqueue: (connection: C, request: PushRequest) => void
  /** The oldest connection with a pending request, now marked processing; undefined when none waits. */
  readonly take: () => readonly [C, PushRequest] | undefined
  /** Ends processing of a connection; a request merged meanwhile is queued again. */
  readonly markDone: (connection: C) => void
  /** Drops a connection (disconnected): its pending request is discarded. */
  readonly remove: (connection: C) => void
  /** Connections waiting (not counting those being processed). */
  readonly pending: () => number
}

export const makePushQueue = <C>(): PushQueue<C> => {
  /** Waiting connections in arrival order (a Map keeps insertion order; merging keeps the place). */
  const pending = new Map<C, PushRequest>()
  /** Connection being pushed → the request merged while it was (undefined = none). */
  const processing = new Map<C, PushRequest | undefined>()

  const enqueue = (connection: C, request: PushRequest): void => {
    if (processing.has(connection)) {
      const held = processing.get(connection)
      processing.set(connection, held === undefined ? request : mergePushRequest(held, request))
      return
    }
    const waiting = pending.get(connection)
    pending.set(connection, waiting === undefined ? request : mergePushRequest(waiting, request))
  }

  const take = (): readonly [C, PushRequest] | undefined => {
    const next = pending.entries().next()
    if (next.done === true) return undefined
    const [connection, request] = next.value
    pending.delete(connection)
    processing.set(connection, undefined)
    return [connection, request]
  }

  const markDone = (connection: C): void => {
    if (!processing.has(connection)) return
    const held = processing.get(connection)
    processing.delete(connection)
    if (held !== undefined) enqueue(connection, held)
  }

  const remove = (connection: C): void => {
    pending.delete(connection)
    processing.delete(connection)
  }

  return { enqueue, take, markDone, remove, pending: () => pending.size }
}
