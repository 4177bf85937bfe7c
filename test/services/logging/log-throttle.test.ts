/**
 * Aggregated repeated warnings: the pure decisions (`occur`, `due`) and the logger driven by
 * TestClock, e.g. 520 refusals cost a first line and one summary per interval.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Logger, Scope, TestClock } from "effect"
import {
  due,
  emptyThrottle,
  formatWindow,
  makeThrottledLogger,
  OVERFLOW_KEY,
  occur,
} from "../../../src/services/logging/log-throttle.js"

const INTERVAL = 10_000

describe("occur and due", () => {
  it("logs a key's first occurrence, counts the rest, summarises once per interval", () => {
    let state = emptyThrottle
    const logged: Array<boolean> = []
    for (let i = 0; i < 5; i++) {
      const r = occur(state, "no token", i * 100, 100)
      logged.push(r.log)
      state = r.state
    }
    expect(logged).toEqual([true, false, false, false, false])
    // not yet due
    expect(due(state, 9_999, INTERVAL).summaries).toEqual([])
    const at10 = due(state, 10_000, INTERVAL)
    expect(at10.summaries).toEqual([{ key: "no token", count: 4, windowMs: 10_000 }])
    // a new interval began: a repeat is still counted, not logged
    const again = occur(at10.state, "no token", 10_500, 100)
    expect(again.log).toBe(false)
    // a quiet interval forgets the key: the next occurrence is logged at once
    const quiet = due(due(at10.state, 20_000, INTERVAL).state, 20_000, INTERVAL)
    expect(quiet.summaries).toEqual([])
    expect(occur(quiet.state, "no token", 20_001, 100).log).toBe(true)
  })

  it("keeps distinct keys apart, and bounds how many it tracks", () => {
    let state = emptyThrottle
    const first = (key: string) => {
      const r = occur(state, key, 0, 2)
      state = r.state
      return r.log
    }
    expect([first("a"), first("b"), first("a"), first("c"), first("d")]).toEqual([true, true, false, true, false])
    expect([...state.windows.keys()]).toEqual(["a", "b", OVERFLOW_KEY])
    expect(due(state, 1, INTERVAL, true).summaries).toEqual([
      { key: "a", count: 1, windowMs: 1 },
      { key: OVERFLOW_KEY, count: 1, windowMs: 1 },
    ])
  })

  it("formats windows in seconds", () => {
    expect(formatWindow(10_000)).toBe("10s")
    expect(formatWindow(1_540)).toBe("1.5s")
  })
})

/** Runs `body` with its log lines collected (messages only). */
const collecting = <A, E>(body: (lines: Array<string>) => Effect.Effect<A, E>) => {
  const lines: Array<string> = []
  const capture = Logger.make(({ message }) => {
    lines.push(Array.isArray(message) ? message.join(" ") : String(message))
  })
  return body(lines).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture)))
}

const withThrottled = <A, E>(use: (log: (i: number) => Effect.Effect<void>) => Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const throttled = yield* makeThrottledLogger({
      interval: Duration.seconds(10),
      summary: ({ key, count, windowMs }) =>
        `${count} more similar refusals in the last ${formatWindow(windowMs)}: ${key}`,
    }).pipe(Scope.extend(scope))
    const result = yield* use((i) => throttled.log("authentication failed", `refused #${i}: authentication failed`))
    yield* Scope.close(scope, Exit.void)
    return result
  })

/** The occurrences a set of lines accounts for: each first line is one, each summary N. */
const accounted = (lines: ReadonlyArray<string>) =>
  lines.reduce((sum, line) => sum + (line.startsWith("refused #") ? 1 : Number(line.match(/^(\d+) more/)?.[1] ?? 0)), 0)

describe("makeThrottledLogger", () => {
  it.effect("520 refusals at once: one line, then one summary when the interval ends", () =>
    collecting((lines) =>
      withThrottled((log) =>
        Effect.gen(function* () {
          for (let i = 0; i < 520; i++) yield* log(i)
          expect(lines).toEqual(["refused #0: authentication failed"])
          // the summary comes from the logger's own fiber, even though the refusals stopped
          yield* TestClock.adjust(Duration.seconds(10))
          expect(lines).toEqual([
            "refused #0: authentication failed",
            "519 more similar refusals in the last 10s: authentication failed",
          ])
          // a quiet interval: nothing more, and the next refusal is logged at once
          yield* TestClock.adjust(Duration.seconds(10))
          yield* log(520)
          expect(lines).toHaveLength(3)
          expect(lines[2]).toBe("refused #520: authentication failed")
        }),
      ),
    ),
  )

  it.effect("520 refusals over 52 s: at most one summary per 10 s; every refusal accounted for", () =>
    collecting((lines) =>
      Effect.gen(function* () {
        yield* withThrottled((log) =>
          Effect.gen(function* () {
            for (let i = 0; i < 520; i++) {
              yield* log(i)
              yield* TestClock.adjust(Duration.millis(100))
            }
          }),
        )
        // closing the scope wrote what was still counted
        expect(lines.length).toBeLessThanOrEqual(1 + Math.ceil(52 / 10) + 1)
        expect(lines.filter((l) => l.startsWith("refused #"))).toEqual(["refused #0: authentication failed"])
        expect(accounted(lines)).toBe(520)
      }),
    ),
  )
})
