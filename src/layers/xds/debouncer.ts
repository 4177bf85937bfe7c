/**
 * The debounce loop (spec part 1 rule 1): merges push requests, waits for a quiet period of
 * `PILOT_DEBOUNCE_AFTER` (at most `PILOT_DEBOUNCE_MAX` since the first event), runs one push
 * at a time, and lets endpoint-only requests through at once when EDS debounce is off.
 * Clock-driven, so tests run it under TestClock.
 */
import { Duration, Effect, type Scope } from "effect"
import { bypassesDebounce, type DebounceOptions, debounceDecision } from "../../services/xds/push/debounce.js"
import { mergePushRequest, type PushRequest } from "../../services/xds/push/push-request.js"

export interface DebouncedPush {
  readonly request: PushRequest
  /** Events merged into this push. */
  readonly events: number
  /** Millis from the first merged event to the push. */
  readonly debounceMillis: number
}

/**
 * Starts a push and returns what is left of it. It may do its work in the call itself, in plain
 * code, rather than in the effect it returns: the debounce timer's fiber then goes straight from
 * the timer into the push. A call that throws counts as a push that died.
 */
export type PushStarter = (push: DebouncedPush) => Effect.Effect<void>

export interface Debouncer {
  readonly offer: (request: PushRequest) => Effect.Effect<void>
}

/** Starts the debounce loop in the current scope; `push` runs for every merged request. */
export const makeDebouncer = (
  options: DebounceOptions,
  push: PushStarter,
): Effect.Effect<Debouncer, never, Scope.Scope> =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const clock = yield* Effect.clock
    const debounceAfter = Duration.toMillis(options.debounceAfter)
    let pending: PushRequest | undefined
    let events = 0
    let firstEventAt = 0
    let lastEventAt = 0
    let free = true
    let generation = 0

    /**
     * Runs in the fiber of the timer that found the quiet period over (no hop to another fiber
     * between the timer and the push): pushes what is pending, and goes on with what arrived
     * during that push once it is done, or re-arms while the quiet period is not over. The push
     * is started in the thunk itself, in plain code: a woken timer goes into the push through
     * as few steps of the runtime as it can.
     */
    const pushWorker: Effect.Effect<void> = Effect.suspend(() => {
      if (pending === undefined || !free) return Effect.void
      const now = clock.unsafeCurrentTimeMillis()
      const decision = debounceDecision(options, now, firstEventAt, lastEventAt)
      if (decision._tag === "Wait") return arm(decision.millis)
      const request = pending
      const merged = events
      pending = undefined
      events = 0
      free = false
      let rest: Effect.Effect<void>
      try {
        rest = push({ request, events: merged, debounceMillis: now - firstEventAt })
      } catch (defect) {
        rest = Effect.die(defect)
      }
      // A push that dies is logged; what arrived meanwhile is still pushed.
      return rest.pipe(
        Effect.catchAllCause((cause) => Effect.logError("push failed", cause)),
        Effect.ensuring(Effect.sync(() => (free = true))),
        Effect.zipRight(pushWorker),
      )
    })

    /** A timer: when it fires and no later one was armed, and no push runs, `pushWorker`. */
    const arm = (millis: number): Effect.Effect<void> => {
      const armed = ++generation
      return Effect.sleep(millis).pipe(
        Effect.zipRight(Effect.suspend(() => (armed === generation && free ? pushWorker : Effect.void))),
        Effect.forkIn(scope),
        Effect.asVoid,
      )
    }

    /**
     * Handled where it is offered, with no queue or fiber in between: the quiet period starts
     * when the event arrives, not when a loop gets to it. The state changes in one synchronous
     * step, so events offered from several fibers cannot interleave inside it.
     */
    const offer = (request: PushRequest): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (bypassesDebounce(options, request))
          return Effect.suspend(() => push({ request, events: 1, debounceMillis: 0 })).pipe(
            Effect.forkIn(scope),
            Effect.asVoid,
          )
        const now = clock.unsafeCurrentTimeMillis()
        lastEventAt = now
        pending = pending === undefined ? request : mergePushRequest(pending, request)
        if (events++ > 0) return Effect.void
        firstEventAt = now
        return arm(debounceAfter)
      })

    return { offer }
  })
