/**
 * Applies MESH_HEAP_GROWTH_PERCENT to V8 at start and, when there is a soft memory limit,
 * samples RSS every `SAMPLE_EVERY` to lower the factor while RSS is over it (the rules are in
 * services/memory/heap-growth.ts). Nothing is collected here: V8 starts its own incremental,
 * concurrent marking sooner, so no stop-the-world collection is forced on the event loop.
 * Exports `mesh_heap_growth_percent` and `mesh_memory_soft_limit_bytes`.
 */
import { readFileSync } from "node:fs"
import { setFlagsFromString } from "node:v8"
import { Effect, Either, Layer, Ref, Schedule } from "effect"
import {
  cgroupLimitBytes,
  MemorySettingError,
  nextGrowthPercent,
  resolveSoftLimit,
} from "../../services/memory/heap-growth.js"
import { MemoryConfig } from "../../services/memory/memory-config.js"
import { Metrics } from "../../services/metrics/metrics.js"

/** How often RSS is compared with the soft limit (a flood allocates ~100 MB/s at most here). */
export const SAMPLE_EVERY = "250 millis"

/** What the layer touches outside itself, replaced in tests. */
export interface HeapGrowthHost {
  readonly rssBytes: () => number
  readonly setGrowthPercent: (percent: number) => void
  /** The cgroup's memory limit file's text, if there is one. */
  readonly cgroupLimitText: () => string | undefined
}

const readOrUndefined = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8")
  } catch {
    return undefined
  }
}

export const processHost: HeapGrowthHost = {
  rssBytes: () => process.memoryUsage.rss(),
  // Read by V8 each time it recomputes the heap's limit, so it applies from the next collection.
  setGrowthPercent: (percent) => setFlagsFromString(`--heap-growing-percent=${percent}`),
  cgroupLimitText: () =>
    readOrUndefined("/sys/fs/cgroup/memory.max") ?? readOrUndefined("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
}

const MiB = 2 ** 20

export const layerWith = (host: HeapGrowthHost): Layer.Layer<never, MemorySettingError, MemoryConfig | Metrics> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const config = yield* MemoryConfig
      const metrics = yield* Metrics
      const configured = config.MESH_HEAP_GROWTH_PERCENT
      if (configured < 0)
        return yield* new MemorySettingError({ message: "MESH_HEAP_GROWTH_PERCENT must be 0 or more" })
      const resolved = resolveSoftLimit({
        setting: config.MESH_MEMORY_LIMIT,
        cgroupBytes: cgroupLimitBytes(host.cgroupLimitText()),
      })
      if (Either.isLeft(resolved))
        return yield* new MemorySettingError({ message: `MESH_MEMORY_LIMIT: ${resolved.left}` })
      const limit = resolved.right
      const growthGauge = metrics.gauge(
        "mesh_heap_growth_percent",
        "How far the heap may grow past what survived its last major collection (MESH_HEAP_GROWTH_PERCENT, lowered over the soft limit)",
      )
      const limitGauge = metrics.gauge(
        "mesh_memory_soft_limit_bytes",
        "The soft memory limit (MESH_MEMORY_LIMIT or 90% of the cgroup's limit); 0 = none",
      )
      const apply = (percent: number) => {
        host.setGrowthPercent(percent)
        growthGauge.set(percent)
      }
      apply(configured)
      limitGauge.set(limit.bytes ?? 0)
      yield* Effect.logInfo(
        `heap growth ${configured === 0 ? "V8's default" : `${configured}%`}; soft memory limit ${
          limit.bytes === undefined ? limit.source : `${Math.round(limit.bytes / MiB)} MiB (${limit.source})`
        }`,
      )
      const softLimit = limit.bytes
      if (softLimit === undefined) return
      const current = yield* Ref.make(configured)
      const sample = Effect.gen(function* () {
        const before = yield* Ref.get(current)
        const rss = host.rssBytes()
        const next = nextGrowthPercent({
          rssBytes: rss,
          softLimitBytes: softLimit,
          configuredPercent: configured,
          currentPercent: before,
        })
        if (next === before) return
        yield* Ref.set(current, next)
        apply(next)
        // Crossing takes a margin each way, so this logs at most once per crossing.
        yield* Effect.logInfo(
          `RSS ${Math.round(rss / MiB)} MiB is ${next === configured ? "back under" : "over"} the soft memory limit of ${Math.round(softLimit / MiB)} MiB: heap growth ${next}%`,
        )
      })
      yield* Effect.forkScoped(Effect.repeat(sample, Schedule.spaced(SAMPLE_EVERY)))
    }),
  )

export const layer = layerWith(processHost)

/** The layer with its settings read from the environment (every daemon's tables have them). */
export const layerFromEnv = layer.pipe(Layer.provide(MemoryConfig.layerFromEnv()))
