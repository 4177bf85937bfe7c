/**
 * A token bucket for requests to the orchestrator API (`--orchestratorApiQPS`,
 * `--orchestratorApiBurst`), as client-go's default rate limiter: up to `burst` requests at once,
 * then `qps` per second. Waiters are served in order. Time comes from Effect's Clock.
 */
import { Clock, Effect } from "effect"

export interface Throttle {
  /** Waits until a request may be sent. */
  readonly take: Effect.Effect<void>
}

export const unlimited: Throttle = { take: Effect.void }

export const makeThrottle = (qps: number, burst: number): Effect.Effect<Throttle> =>
  Effect.gen(function* () {
    if (!(qps > 0)) return unlimited
    const capacity = Math.max(1, burst)
    const lock = yield* Effect.makeSemaphore(1)
    let tokens = capacity
    let last = yield* Clock.currentTimeMillis
    const take = lock.withPermits(1)(
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        tokens = Math.min(capacity, tokens + ((now - last) / 1000) * qps)
        last = now
        if (tokens >= 1) {
          tokens -= 1
          return
        }
        const waitMillis = Math.ceil(((1 - tokens) / qps) * 1000)
        yield* Effect.sleep(waitMillis)
        const after = yield* Clock.currentTimeMillis
        tokens = Math.min(capacity, tokens + ((after - last) / 1000) * qps) - 1
        last = after
      }),
    )
    return { take }
  })
