/**
 * The `PILOT_XDS_CACHE_INDEX_CLEAR_INTERVAL` loop: every interval, the resource cache drops the
 * superseded versions nobody read since the previous tick. Clock-driven (TestClock in tests).
 */
import { Duration, Effect, type Scope } from "effect"
import type { ResourceCache } from "../../services/xds/cache/resource-cache.js"

/** Forks the loop into the current scope; an unset or zero interval starts nothing. */
export const clearCacheIndexEvery = (
  cache: Pick<ResourceCache, "clearIndex">,
  interval: Duration.Duration | undefined,
): Effect.Effect<void, never, Scope.Scope> => {
  if (interval === undefined || !Duration.greaterThan(interval, Duration.zero)) return Effect.void
  return Effect.sleep(interval).pipe(
    Effect.zipRight(Effect.sync(() => cache.clearIndex())),
    Effect.flatMap((dropped) =>
      dropped > 0 ? Effect.logDebug(`xDS cache: cleared ${dropped} superseded entries`) : Effect.void,
    ),
    Effect.forever,
    Effect.forkScoped,
    Effect.asVoid,
  )
}
