/**
 * When the agent's xDS proxy opens the next upstream stream for a downstream stream (issue 6
 * item 3). A stream that had answered and then broke (the discovery server restarted, a
 * connection was reset) is reopened at once: the server most likely still exists, or another
 * replica does. A stream that never answered (connection refused, TLS or auth failure) waits for
 * the next backoff step; the backoff starts over once a stream answers again, so one outage
 * never makes the next one slower to recover from.
 */
import { Effect, Schedule } from "effect"

/** How one upstream stream ended. */
export type UpstreamOutcome =
  /** The downstream stream ended: stop. */
  | "downstream-ended"
  /** It answered at least once, then broke. */
  | "answered"
  /** It broke without ever answering. */
  | "failed"

/** Runs `attempt` (one upstream stream, start to end) over and over until the downstream ends. */
export const superviseUpstream = <R>(
  attempt: Effect.Effect<UpstreamOutcome, never, R>,
  backoff: Schedule.Schedule<unknown, unknown, never>,
): Effect.Effect<void, never, R> =>
  Effect.gen(function* () {
    const driver = yield* Schedule.driver(backoff)
    for (;;) {
      const outcome = yield* attempt
      if (outcome === "downstream-ended") return
      if (outcome === "answered") {
        yield* driver.reset
        continue
      }
      // a schedule that ends starts over: the downstream is never given up on
      yield* driver
        .next(undefined)
        .pipe(Effect.catchAll(() => driver.reset.pipe(Effect.zipRight(driver.next(undefined)), Effect.ignore)))
    }
  })
