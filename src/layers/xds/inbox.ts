/**
 * A stream's requests, in order, for its fiber, with a bound on what the stream may queue.
 *
 * grpc-js reads a stream's requests as fast as the peer sends them, whether or not the server
 * handles them: a peer that never reads our answers (the fiber then waits on its write) and
 * keeps sending would grow the server without limit. So:
 * - while the fiber is busy and a request is queued, the call is paused: grpc-js stops reading
 *   it, and HTTP/2 flow control holds the peer (the reference's handler blocks the same way);
 * - state-of-the-world requests queue per type URL, the latest replacing the one queued before
 *   (only the latest request of a type matters, as the reference's clients assume); delta
 *   requests queue as they are (their subscriptions add up, merging them would change them);
 * - a stream that queues more than `maxPending` requests all the same is ended with
 *   RESOURCE_EXHAUSTED (`onOverflow`).
 *
 * `screen` sees every request as it is read (and may drop it). A request that `acceptNow` takes while nothing is queued or being handled (an ACK, the most
 * common request by far) never reaches the fiber: with thousands of proxies ACKing a push, a
 * fiber wake-up per ACK would cost more than the ACK.
 */
import { Effect } from "effect"

/** The part of a grpc-js server stream an inbox uses. */
export interface InboxCall<Req> {
  readonly on: {
    (event: "data", listener: (request: Req) => void): unknown
    (event: "end" | "error" | "close" | "cancelled", listener: () => void): unknown
  }
  readonly pause: () => unknown
  readonly resume: () => unknown
}

export interface InboxOptions<Req> {
  /** Looks at every request first (the first one's node, unknown types); false = drop it. */
  readonly screen: (request: Req) => boolean
  /** Handles a request where it is read, when nothing else is queued; whether it did. */
  readonly acceptNow: (request: Req) => boolean
  /** Queued requests with the same key replace each other (the latest wins); undefined = keep all. */
  readonly coalesceKey?: (request: Req) => string
  /** Queued requests (after coalescing) a stream may hold; one more ends it. */
  readonly maxPending: number
  /** The stream queued too much: end it (the inbox then closes). */
  readonly onOverflow: (pending: number) => void
}

export interface Inbox<Req> {
  /** The next request, or null once the stream closed and everything queued was taken. */
  readonly next: Effect.Effect<Req | null>
  /** The request taken last is handled. */
  readonly handled: () => void
}

export const makeInbox = <Req>(call: InboxCall<Req>, options: InboxOptions<Req>): Inbox<Req> => {
  /** Queued requests in arrival order; SotW keys are their type URL, delta keys a counter. */
  const pending = new Map<unknown, Req>()
  let sequence = 0
  let busy = false
  let closed = false
  let paused = false
  let waiter: ((request: Req | null) => void) | undefined

  const takeFirst = (): Req | null => {
    const first = pending.entries().next()
    if (first.done === true) return null
    pending.delete(first.value[0])
    busy = true
    // The fiber works on the last queued request: read on.
    if (pending.size === 0 && paused && !closed) {
      paused = false
      call.resume()
    }
    return first.value[1]
  }

  const wake = () => {
    const resume = waiter
    if (resume === undefined) return
    if (pending.size === 0 && !closed) return
    waiter = undefined
    resume(takeFirst())
  }

  call.on("data", (request: Req) => {
    if (closed || !options.screen(request)) return
    if (!busy && pending.size === 0 && options.acceptNow(request)) return
    const key = options.coalesceKey === undefined ? sequence++ : options.coalesceKey(request)
    // A replaced request keeps its place: its type is handled when it would have been.
    pending.set(key, request)
    if (pending.size > options.maxPending) {
      const count = pending.size
      pending.clear()
      closed = true
      options.onOverflow(count)
      wake()
      return
    }
    if (waiter !== undefined) wake()
    else if (!paused) {
      // The fiber is busy: stop reading until it has taken what is queued.
      paused = true
      call.pause()
    }
  })
  const close = () => {
    closed = true
    wake()
  }
  call.on("end", close)
  call.on("error", close)
  call.on("close", close)
  call.on("cancelled", close)

  return {
    next: Effect.async<Req | null>((resume) => {
      if (pending.size > 0 || closed) resume(Effect.succeed(takeFirst()))
      else waiter = (request) => resume(Effect.succeed(request))
    }),
    handled: () => {
      busy = false
    },
  }
}
