/**
 * The time a process has to stop once asked to (`--shutdownDuration`): one countdown shared by
 * every listener. It starts when SIGTERM/SIGINT arrives (`begin`), or when a listener first
 * asks how much is left, for a shutdown no signal began (a sibling failing at start-up).
 *
 * Listeners close one after another (a listener's dependents first), so each lets its clients
 * finish only while the countdown lasts (`remaining`), and each also closes what it still holds
 * the moment the countdown ends (`atExpiry`), even before its own turn to close: a listener
 * waiting its turn behind another one's stuck clients must not push the end of the shutdown
 * past the countdown.
 */
import { Clock, Context, Deferred, Duration, Effect, Option, type Scope } from "effect"

export interface ShutdownDeadlineShape {
  /** The length of the countdown. */
  readonly duration: Duration.Duration
  /** Starts the countdown; a later call keeps the first start. */
  readonly begin: Effect.Effect<void>
  /** Time left (zero once over); starts the countdown if nothing did. */
  readonly remaining: Effect.Effect<Duration.Duration>
  /** Completes when the countdown, once started, is over. */
  readonly expired: Effect.Effect<void>
}

/**
 * Provided by a program that bounds its shutdown. A listener built without it falls back on
 * its own timeout, counted from when it starts to close.
 */
export class ShutdownDeadline extends Context.Tag("mesh/ShutdownDeadline")<ShutdownDeadline, ShutdownDeadlineShape>() {}

export const makeShutdownDeadline = (duration: Duration.Duration): Effect.Effect<ShutdownDeadlineShape> =>
  Effect.map(Deferred.make<number>(), (started) => {
    // The start, fixed by the first caller.
    const start = Effect.zipRight(
      Effect.flatMap(Clock.currentTimeMillis, (now) => Deferred.succeed(started, now)),
      Deferred.await(started),
    )
    const total = Duration.toMillis(duration)
    const left = (began: number) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const millis = total - (now - began)
        return millis === Number.POSITIVE_INFINITY ? Duration.infinity : Duration.millis(Math.max(0, millis))
      })
    return {
      duration,
      begin: Effect.asVoid(start),
      remaining: Effect.flatMap(start, left),
      expired: Deferred.await(started).pipe(Effect.flatMap(left), Effect.flatMap(Effect.sleep)),
    }
  })

/**
 * How long a closing listener may still wait for its clients, asked when it starts to close:
 * what the program's countdown has left, or `fallback` (from then) when the program set none.
 * Resolved where the listener is built, since its finalizer may run without that context.
 */
export const drainBudget = (fallback: Duration.Duration): Effect.Effect<Effect.Effect<Duration.Duration>> =>
  Effect.map(Effect.serviceOption(ShutdownDeadline), (deadline) =>
    Option.match(deadline, { onNone: () => Effect.succeed(fallback), onSome: (d) => d.remaining }),
  )

/**
 * Runs `close` when the program's countdown ends, if the calling scope is still open then: a
 * listener whose turn to close has not come (it waits behind another one) closes what it holds
 * all the same. Once its scope closes, its own close, bounded by `remaining`, takes over. Does
 * nothing when the program set no countdown.
 */
export const closeAtExpiry = (close: Effect.Effect<void>): Effect.Effect<void, never, Scope.Scope> =>
  Effect.flatMap(Effect.serviceOption(ShutdownDeadline), (deadline) =>
    Option.match(deadline, {
      onNone: () => Effect.void,
      onSome: (d) => Effect.asVoid(Effect.forkScoped(Effect.zipRight(d.expired, close))),
    }),
  )
