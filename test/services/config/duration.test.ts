import { describe, expect, it } from "@effect/vitest"
import { Duration, Either } from "effect"
import {
  formatGoDuration,
  formatGoDurationNanos,
  parseGoDuration,
  parseGoDurationNanos,
} from "../../../src/services/config/duration.js"

const MAX_INT64 = 9_223_372_036_854_775_807n
const SECOND = 1_000_000_000n
const nanosOf = (text: string): bigint => Either.getOrThrow(parseGoDurationNanos(text))

describe("parseGoDurationNanos", () => {
  it("reads every form the spec prints", () => {
    expect(nanosOf("100ms")).toBe(100_000_000n)
    expect(nanosOf("500ms")).toBe(500_000_000n)
    expect(nanosOf("10s")).toBe(10n * SECOND)
    expect(nanosOf("0s")).toBe(0n)
    expect(nanosOf("5m0s")).toBe(300n * SECOND)
    expect(nanosOf("20m0s")).toBe(1_200n * SECOND)
    expect(nanosOf("1h0m0s")).toBe(3_600n * SECOND)
    expect(nanosOf("24h0m0s")).toBe(86_400n * SECOND)
    expect(nanosOf("2160h0m0s")).toBe(2_160n * 3_600n * SECOND)
    expect(nanosOf("87600h0m0s")).toBe(87_600n * 3_600n * SECOND)
  })

  it("reads the int64 maximum exactly", () => {
    expect(nanosOf("2562047h47m16.854775807s")).toBe(MAX_INT64)
  })

  it("reads fractions, signs, zero and small units", () => {
    expect(nanosOf("1.5s")).toBe(1_500_000_000n)
    expect(nanosOf(".5s")).toBe(500_000_000n)
    expect(nanosOf("5.s")).toBe(5n * SECOND)
    expect(nanosOf("1h30m")).toBe(5_400n * SECOND)
    expect(nanosOf("-1s")).toBe(-SECOND)
    expect(nanosOf("+2s")).toBe(2n * SECOND)
    expect(nanosOf("0")).toBe(0n)
    expect(nanosOf("-0")).toBe(0n)
    expect(nanosOf("300us")).toBe(300_000n)
    expect(nanosOf("1\u00b5s")).toBe(1_000n) // micro sign
    expect(nanosOf("1\u03bcs")).toBe(1_000n) // Greek mu
    expect(nanosOf("7ns")).toBe(7n)
    expect(nanosOf("1.000000001s")).toBe(SECOND + 1n)
  })

  it("admits the int64 minimum but nothing beyond either end", () => {
    expect(nanosOf("-2562047h47m16.854775808s")).toBe(-MAX_INT64 - 1n)
    expect(Either.isLeft(parseGoDurationNanos("2562047h47m16.854775808s"))).toBe(true)
    expect(Either.isLeft(parseGoDurationNanos("9999999h"))).toBe(true)
  })

  it("rejects malformed durations", () => {
    for (const bad of ["soon", "10", "1x", "", " ", "-", ".s", "1h 30m", "h", "1.5", "s1", "1s2"]) {
      expect(Either.isLeft(parseGoDurationNanos(bad)), `"${bad}"`).toBe(true)
    }
  })

  it("names the unknown unit", () => {
    const result = parseGoDurationNanos("1x")
    expect(Either.isLeft(result) && result.left).toContain('unknown unit "x"')
  })
})

describe("parseGoDuration", () => {
  it("gives an Effect Duration", () => {
    expect(Duration.toMillis(Either.getOrThrow(parseGoDuration("100ms")))).toBe(100)
    expect(Duration.toHours(Either.getOrThrow(parseGoDuration("87600h0m0s")))).toBe(87_600)
  })

  it("turns negative durations into zero", () => {
    expect(Duration.equals(Either.getOrThrow(parseGoDuration("-1s")), Duration.zero)).toBe(true)
  })

  it("keeps the maximum at nanosecond precision", () => {
    const max = Either.getOrThrow(parseGoDuration("2562047h47m16.854775807s"))
    expect(Duration.unsafeToNanos(max)).toBe(MAX_INT64)
    expect(formatGoDuration(max)).toBe("2562047h47m16.854775807s")
  })

  it("rejects what parseGoDurationNanos rejects", () => {
    expect(Either.isLeft(parseGoDuration("soon"))).toBe(true)
  })
})

describe("formatGoDurationNanos", () => {
  it("prints the way Go's Duration.String does", () => {
    expect(formatGoDurationNanos(0n)).toBe("0s")
    expect(formatGoDurationNanos(1n)).toBe("1ns")
    expect(formatGoDurationNanos(300_000n)).toBe("300\u00b5s")
    expect(formatGoDurationNanos(1_500n)).toBe("1.5\u00b5s")
    expect(formatGoDurationNanos(100_000_000n)).toBe("100ms")
    expect(formatGoDurationNanos(1_500_000_000n)).toBe("1.5s")
    expect(formatGoDurationNanos(90n * SECOND)).toBe("1m30s")
    expect(formatGoDurationNanos(3_600n * SECOND)).toBe("1h0m0s")
    expect(formatGoDurationNanos(-SECOND)).toBe("-1s")
    expect(formatGoDurationNanos(MAX_INT64)).toBe("2562047h47m16.854775807s")
  })

  it("round-trips the spec's canonical forms exactly", () => {
    for (const text of [
      "100ms",
      "500ms",
      "1.5s",
      "10s",
      "5m0s",
      "20m0s",
      "1h0m0s",
      "24h0m0s",
      "2160h0m0s",
      "87600h0m0s",
      "300\u00b5s",
      "-1s",
      "2562047h47m16.854775807s",
    ]) {
      expect(formatGoDurationNanos(nanosOf(text))).toBe(text)
    }
  })

  it("normalizes other spellings", () => {
    expect(formatGoDurationNanos(nanosOf("0"))).toBe("0s")
    expect(formatGoDurationNanos(nanosOf("300us"))).toBe("300\u00b5s")
    expect(formatGoDurationNanos(nanosOf("1h30m"))).toBe("1h30m0s")
  })

  it("prints an infinite Duration as the int64 maximum", () => {
    expect(formatGoDuration(Duration.infinity)).toBe("2562047h47m16.854775807s")
  })
})
