/**
 * `RuntimeStats` while the layer lives: a `perf_hooks` GC observer counts collections and their
 * pauses, and an event-loop delay histogram is read and reset every window (so the page shows
 * the recent delay, not the average since start). Both are released with the scope.
 */

import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks"
import { getHeapStatistics } from "node:v8"
import { Clock, Duration, Effect, Layer, Ref } from "effect"
import { gcKindName, type LoopDelayFigures, RuntimeStats } from "../services/debug/runtime-stats.js"

/** How long one event-loop delay window lasts. */
const WINDOW = Duration.seconds(5)
const NO_DELAY: LoopDelayFigures = { windowSeconds: 0, min: 0, mean: 0, p50: 0, p99: 0, max: 0 }

/** The histogram's sampling timer, milliseconds. */
const RESOLUTION_MS = 10

/**
 * A recorded value as the delay past the sampling timer's own interval, milliseconds: the
 * histogram records how long the timer took to fire, which includes `RESOLUTION_MS`.
 */
const delayMs = (nanos: number): number =>
  Number.isFinite(nanos) ? Math.max(0, Math.round(nanos / 1e4 - RESOLUTION_MS * 100) / 100) : 0

export const layer: Layer.Layer<RuntimeStats> = Layer.scoped(
  RuntimeStats,
  Effect.gen(function* () {
    // The observer's counters belong to this layer instance (never module state).
    const gc = { count: 0, pauseMs: 0, byKind: {} as Record<string, number> }
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        const observer = new PerformanceObserver((list) => {
          for (const entry of list.getEntries()) {
            gc.count++
            gc.pauseMs += entry.duration
            const kind = gcKindName((entry.detail as { kind?: number } | undefined)?.kind)
            gc.byKind[kind] = (gc.byKind[kind] ?? 0) + 1
          }
        })
        observer.observe({ entryTypes: ["gc"] })
        return observer
      }),
      (observer) => Effect.sync(() => observer.disconnect()),
    )
    const delay = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
        histogram.enable()
        return histogram
      }),
      (histogram) => Effect.sync(() => histogram.disable()),
    )
    const lastWindow = yield* Ref.make(NO_DELAY)
    yield* Effect.suspend(() => {
      const figures: LoopDelayFigures =
        delay.count === 0
          ? NO_DELAY
          : {
              windowSeconds: Duration.toSeconds(WINDOW),
              min: delayMs(delay.min),
              mean: delayMs(delay.mean),
              p50: delayMs(delay.percentile(50)),
              p99: delayMs(delay.percentile(99)),
              max: delayMs(delay.max),
            }
      delay.reset()
      return Ref.set(lastWindow, figures)
    }).pipe(Effect.delay(WINDOW), Effect.forever, Effect.forkScoped)
    return {
      sample: Effect.gen(function* () {
        const heap = getHeapStatistics()
        return {
          at: yield* Clock.currentTimeMillis,
          uptimeSeconds: process.uptime(),
          memory: process.memoryUsage(),
          heap: {
            totalHeapSize: heap.total_heap_size,
            usedHeapSize: heap.used_heap_size,
            heapSizeLimit: heap.heap_size_limit,
            mallocedMemory: heap.malloced_memory,
            externalMemory: heap.external_memory,
          },
          gc: { count: gc.count, pauseMs: Math.round(gc.pauseMs * 100) / 100, byKind: { ...gc.byKind } },
          eventLoopDelay: yield* Ref.get(lastWindow),
        }
      }),
    }
  }),
)
