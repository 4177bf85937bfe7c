/**
 * The process's runtime figures the introspection memory page shows and `/runtimej/` serves:
 * memory (as `/memj/`), V8's heap, garbage collections and event-loop delay. The figures that
 * need an observer (GC, delay) are kept by the layer (layers/runtime-stats.ts) while it lives.
 */
import { Context, type Effect } from "effect"

export interface GcFigures {
  /** Collections since the observer started. */
  readonly count: number
  /** Their total pause, milliseconds. */
  readonly pauseMs: number
  /** Collections per kind (minor, major, incremental, weakcb). */
  readonly byKind: Readonly<Record<string, number>>
}

/** Event-loop delay over the last window, milliseconds (0 before the first window closed). */
export interface LoopDelayFigures {
  readonly windowSeconds: number
  readonly min: number
  readonly mean: number
  readonly p50: number
  readonly p99: number
  readonly max: number
}

export interface RuntimeSample {
  /** When the sample was taken, epoch millis. */
  readonly at: number
  readonly uptimeSeconds: number
  readonly memory: NodeJS.MemoryUsage
  readonly heap: {
    readonly totalHeapSize: number
    readonly usedHeapSize: number
    readonly heapSizeLimit: number
    readonly mallocedMemory: number
    readonly externalMemory: number
  }
  readonly gc: GcFigures
  readonly eventLoopDelay: LoopDelayFigures
}

export class RuntimeStats extends Context.Tag("mesh/RuntimeStats")<
  RuntimeStats,
  { readonly sample: Effect.Effect<RuntimeSample> }
>() {}

/** The name of a GC kind of `perf_hooks` (`constants.NODE_PERFORMANCE_GC_*`, the entry's `detail.kind`). */
export const gcKindName = (kind: number | undefined): string => {
  switch (kind) {
    case 1:
      return "minor"
    case 4:
      return "major"
    case 8:
      return "incremental"
    case 16:
      return "weakcb"
    default:
      return "other"
  }
}
