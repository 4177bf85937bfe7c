/**
 * Repeated warnings, aggregated (issue 16 item 10): the first occurrence of a key is logged at
 * once; later ones within the same interval are only counted, and at most one summary line per
 * key and interval says how many there were ("... 519 more similar refusals in the last 10s").
 * A caller that repeats a refused request 500 times a second thus costs two lines every
 * interval, not 500, while the first line still shows exactly what went wrong. Metrics keep
 * counting every occurrence; only the log is thinned.
 *
 * The decision logic (`occur`, `due`) is pure and takes the time as an argument; the logger
 * (`makeThrottledLogger`) reads it from Effect's Clock, so TestClock drives it in tests.
 *
 * The process logger (layers/logging.ts) applies the same logic to every line annotated with
 * `throttled(reason)` (services/logging/logging.ts), keyed by scope, level and reason
 * (`lineThrottleKey`), and writes `suppressedLine` summaries: a call site needs no logger of
 * its own to be throttled (issue 34 item 4).
 */
import { Clock, Duration, Effect, LogLevel, Ref, type Scope } from "effect"

/** One key's current interval: when it began and how many occurrences it swallowed since. */
interface Window {
  readonly start: number
  readonly suppressed: number
}

export interface ThrottleState {
  readonly windows: ReadonlyMap<string, Window>
}

export const emptyThrottle: ThrottleState = { windows: new Map() }

/**
 * Where occurrences of new keys go once `maxKeys` keys are being tracked: keys may carry
 * caller-chosen text, and a caller must not grow this state without bound.
 */
export const OVERFLOW_KEY = "(other)"

/** A summary due: `count` occurrences of `key` were not logged during the last `windowMs`. */
export interface Summary {
  readonly key: string
  readonly count: number
  readonly windowMs: number
}

/** An occurrence of `key` at `now`: whether to log it, and the state after. */
export const occur = (
  state: ThrottleState,
  key: string,
  now: number,
  maxKeys: number,
): { readonly log: boolean; readonly state: ThrottleState } => {
  const tracked = state.windows.has(key) || state.windows.size < maxKeys ? key : OVERFLOW_KEY
  const windows = new Map(state.windows)
  const window = windows.get(tracked)
  if (window === undefined) {
    windows.set(tracked, { start: now, suppressed: 0 })
    return { log: true, state: { windows } }
  }
  windows.set(tracked, { start: window.start, suppressed: window.suppressed + 1 })
  return { log: false, state: { windows } }
}

/**
 * The summaries due at `now` (every key whose interval has ended, or all with `flushAll`): a key
 * that swallowed occurrences gets a summary and a new interval (so that it is summarised again
 * at most one interval later); a key that stayed quiet is forgotten, and its next occurrence is
 * logged at once.
 */
export const due = (
  state: ThrottleState,
  now: number,
  intervalMs: number,
  flushAll = false,
): { readonly summaries: ReadonlyArray<Summary>; readonly state: ThrottleState } => {
  const summaries: Array<Summary> = []
  const windows = new Map(state.windows)
  for (const [key, window] of state.windows) {
    if (!flushAll && now - window.start < intervalMs) continue
    if (window.suppressed > 0) {
      summaries.push({ key, count: window.suppressed, windowMs: now - window.start })
      windows.set(key, { start: now, suppressed: 0 })
    } else {
      windows.delete(key)
    }
  }
  return { summaries, state: summaries.length === 0 && windows.size === state.windows.size ? state : { windows } }
}

export interface ThrottledLogger {
  /** Logs `message` now, or counts it toward the next summary of `key`. */
  readonly log: (key: string, message: string) => Effect.Effect<void>
}

export interface ThrottledLoggerOptions {
  /** At most one summary per key and interval (default 10 s). */
  readonly interval?: Duration.DurationInput
  readonly level?: LogLevel.LogLevel
  /** Keys tracked at once; more fall under OVERFLOW_KEY (default 100). */
  readonly maxKeys?: number
  /** The summary line, e.g. `${count} more similar refusals in the last ${seconds}s (${key})`. */
  readonly summary: (summary: Summary) => string
}

/** "10s", "1.5s": the length of a summarised window as a reader wants it. */
export const formatWindow = (ms: number): string => `${Math.round(ms / 100) / 10}s`

/**
 * A throttled logger for the lifetime of the scope: a fiber writes the summaries that fall due
 * even when the repeats stop, and closing the scope writes what is still counted.
 */
export const makeThrottledLogger = (
  options: ThrottledLoggerOptions,
): Effect.Effect<ThrottledLogger, never, Scope.Scope> =>
  Effect.gen(function* () {
    const intervalMs = Duration.toMillis(options.interval ?? Duration.seconds(10))
    const level = options.level ?? LogLevel.Warning
    const maxKeys = options.maxKeys ?? 100
    const state = yield* Ref.make(emptyThrottle)
    const writeSummaries = (summaries: ReadonlyArray<Summary>) =>
      Effect.forEach(summaries, (s) => Effect.logWithLevel(level, options.summary(s)), { discard: true })
    const flush = (flushAll: boolean) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Ref.modify(state, (s) => {
          const result = due(s, now, intervalMs, flushAll)
          return [result.summaries, result.state]
        }),
      ).pipe(Effect.flatMap(writeSummaries))

    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(Duration.millis(intervalMs)), flush(false))))
    yield* Effect.addFinalizer(() => flush(true))

    return {
      log: (key, message) =>
        Effect.gen(function* () {
          // summaries that fell due first, so that the lines stay in order
          yield* flush(false)
          const now = yield* Clock.currentTimeMillis
          const logNow = yield* Ref.modify(state, (s) => {
            const result = occur(s, key, now, maxKeys)
            return [result.log, result.state]
          })
          if (logNow) yield* Effect.logWithLevel(level, message)
        }),
    }
  })

/** The logger's interval for lines marked `throttled(reason)`: a first line, then one summary per 10 s. */
export const LINE_THROTTLE_INTERVAL_MS = 10_000
/** Scope, level and reason triples the logger tracks at once; further ones share OVERFLOW_KEY. */
export const LINE_THROTTLE_MAX_KEYS = 100

/** What a throttled line is counted under. */
export interface LineThrottleKey {
  readonly scope: string
  /** The level name (`info`, `warn`, …). */
  readonly level: string
  readonly reason: string
}

const SEPARATOR = "\u0000"

/** The throttle key of a line (scope, level and reason; none of them holds a NUL). */
export const lineThrottleKey = (key: LineThrottleKey): string =>
  `${key.scope}${SEPARATOR}${key.level}${SEPARATOR}${key.reason}`

/** The parts of a key made by `lineThrottleKey`; undefined for OVERFLOW_KEY. */
export const parseLineThrottleKey = (key: string): LineThrottleKey | undefined => {
  const [scope, level, ...reason] = key.split(SEPARATOR)
  return level === undefined || reason.length === 0
    ? undefined
    : { scope: scope!, level, reason: reason.join(SEPARATOR) }
}

/** The summary the logger writes for a throttled key. */
export const suppressedLine = (summary: Summary, reason: string): string =>
  `suppressed ${summary.count} similar ${summary.count === 1 ? "line" : "lines"} in the last ${formatWindow(summary.windowMs)}: ${reason}`
