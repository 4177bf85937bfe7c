/** Reading the Metrics service's registry, and waiting for a condition, in layer tests. */
import { type Duration, Effect } from "effect"
import { Metrics } from "../../src/services/metrics/metrics.js"

/**
 * The sum of a metric's values (those carrying `labels`, when given); `missing` when no such
 * metric is registered.
 */
export const metricValue = (name: string, labels: Record<string, string> = {}, missing = 0) =>
  Effect.gen(function* () {
    const metric = (yield* Metrics).registry.getSingleMetric(name)
    if (metric === undefined) return missing
    const values = (yield* Effect.promise(async () => metric.get())).values
    return values
      .filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
      .reduce((n, v) => n + v.value, 0)
  })

/** Runs `self` until `until` holds (every 20 ms, never a blind sleep), within `within`. */
export const poll = <A, E, R>(self: Effect.Effect<A, E, R>, until: (a: A) => boolean, within: Duration.DurationInput) =>
  Effect.gen(function* () {
    for (;;) {
      const value = yield* self
      if (until(value)) return value
      yield* Effect.sleep("20 millis")
    }
  }).pipe(Effect.timeout(within))
