/**
 * The debounce loop (spec part 1 rule 1): merges push requests, waits for a quiet period of
 * `PILOT_DEBOUNCE_AFTER` (at most `PILOT_DEBOUNCE_MAX` since the first event), runs one push
 * at a time, and lets endpoint-only requests through at once when EDS debounce is off.
 * Clock-driven, so tests run it under TestClock.
 */
import { Clock, Duration, Effect, Queue, type Scope } from "effect"
import { bypassesDebounce, type DebounceOptions, debounceDecision } from "../../services/xds/debounce.js"
import { mergePushRequest, type PushRequest } from "../../services/xds/push-request.js"

export interface DebouncedPush {
  readonly request: PushRequest
  /** Events merged into this push. */
  readonly events: number
  /** Millis from the first merged event to the push. */
  readonly debounceMillis: number
}

export interface Debouncer {
  readonly offer: (request: PushRequest) => Effect.Effect<void>
}

type Message =
  | { readonly _tag: "Event"; readonly request: PushRequest }
  | { readonly _tag: "Timer"; readonly generation: number }
  | { readonly _tag: "Free" }

/** Starts the debounce loop in the current scope; `push` runs for every merged request. */
export const makeDebouncer = (
  options: DebounceOptions,
  push: (push: DebouncedPush) => Effect.Effect<void>,
): Effect.Effect<Debouncer, never, Scope.Scope> =>
  Effect.gen(function* () {
    const mailbox = yield* Queue.unbounded<Message>()
    let pending: PushRequest | undefined
    let events = 0
    let firstEventAt = 0
    let lastEventAt = 0
    let free = true
    let generation = 0

    const arm = (millis: number) => {
      const armed = ++generation
      return Effect.sleep(millis).pipe(
        Effect.zipRight(Queue.offer(mailbox, { _tag: "Timer", generation: armed })),
        Effect.forkScoped,
        Effect.asVoid,
      )
    }

    const pushWorker = Effect.gen(function* () {
      if (pending === undefined) return
      const now = yield* Clock.currentTimeMillis
      const decision = debounceDecision(options, now, firstEventAt, lastEventAt)
      if (decision._tag === "Wait") return yield* arm(decision.millis)
      const request = pending
      const merged = events
      pending = undefined
      events = 0
      free = false
      yield* push({ request, events: merged, debounceMillis: now - firstEventAt }).pipe(
        Effect.ensuring(Queue.offer(mailbox, { _tag: "Free" })),
        Effect.forkScoped,
      )
    })

    const handle = (message: Message): Effect.Effect<void, never, Scope.Scope> =>
      Effect.gen(function* () {
        switch (message._tag) {
          case "Event": {
            if (bypassesDebounce(options, message.request)) {
              yield* push({ request: message.request, events: 1, debounceMillis: 0 }).pipe(Effect.forkScoped)
              return
            }
            const now = yield* Clock.currentTimeMillis
            lastEventAt = now
            if (events === 0) {
              firstEventAt = now
              yield* arm(Duration.toMillis(options.debounceAfter))
            }
            events++
            pending = pending === undefined ? message.request : mergePushRequest(pending, message.request)
            return
          }
          case "Timer":
            if (message.generation === generation && free) yield* pushWorker
            return
          case "Free":
            free = true
            yield* pushWorker
            return
        }
      })

    yield* Queue.take(mailbox).pipe(Effect.flatMap(handle), Effect.forever, Effect.forkScoped)
    return { offer: (request) => Queue.offer(mailbox, { _tag: "Event", request }).pipe(Effect.asVoid) }
  })
