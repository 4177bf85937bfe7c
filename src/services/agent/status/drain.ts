/**
 * The drain rule (spec 001 §1 rule 1): on shutdown the agent drains; with
 * EXIT_ON_ZERO_ACTIVE_CONNECTIONS it ends as soon as active connections reach zero, but never
 * before MINIMUM_DRAIN_DURATION, and waits for zero at most the termination drain duration
 * after it (a client that never lets its stream end, one that stopped reading, must not keep
 * the agent up: the listeners close what is left after the drain); otherwise it drains for the
 * termination drain duration.
 * Clock-driven, so tests run it under TestClock.
 */
import { Duration, Effect, Schedule } from "effect"

export interface DrainSettings {
  readonly minimumDrain: Duration.Duration
  readonly exitOnZeroActiveConnections: boolean
  /** ProxyConfig terminationDrainDuration: the fixed drain without EXIT_ON_ZERO_ACTIVE_CONNECTIONS. */
  readonly terminationDrain: Duration.Duration
  /** How often active connections are checked (the reference checks every second). */
  readonly checkInterval?: Duration.Duration
}

export const drain = <E, R>(settings: DrainSettings, activeConnections: Effect.Effect<number, E, R>) =>
  Effect.gen(function* () {
    if (!settings.exitOnZeroActiveConnections) {
      yield* Effect.logInfo(`draining for ${Duration.format(settings.terminationDrain)}`)
      yield* Effect.sleep(settings.terminationDrain)
      return
    }
    yield* Effect.logInfo(
      `draining: waiting ${Duration.format(settings.minimumDrain)}, then until active connections reach zero`,
    )
    yield* Effect.sleep(settings.minimumDrain)
    const remaining = yield* activeConnections.pipe(
      Effect.repeat({
        schedule: Schedule.spaced(settings.checkInterval ?? Duration.seconds(1)).pipe(
          Schedule.upTo(settings.terminationDrain),
        ),
        until: (n) => n === 0,
      }),
    )
    yield* remaining === 0
      ? Effect.logInfo("drained (0 active connections)")
      : Effect.logInfo(
          `drain over after ${Duration.format(settings.terminationDrain)} more with ${remaining} active connection(s): closing them`,
        )
  })
