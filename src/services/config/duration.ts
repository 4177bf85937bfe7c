/**
 * Durations in the Go form the spec uses everywhere (`100ms`, `1h0m0s`, `87600h0m0s`,
 * `2562047h47m16.854775807s`). Parsing keeps nanosecond precision with bigint so the largest
 * value (the int64 maximum) round-trips exactly.
 */
import { Duration, Either } from "effect"

const NANOS_PER_UNIT: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  "\u00b5s": 1_000n, // micro sign
  "\u03bcs": 1_000n, // Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
}

const MAX_INT64 = 9_223_372_036_854_775_807n
const COMPONENT = /^(\d*)(?:\.(\d*))?([a-zµμ]+)/

/** Parses a Go duration string to signed nanoseconds. */
export const parseGoDurationNanos = (input: string): Either.Either<bigint, string> => {
  let rest = input.trim()
  const original = rest
  if (rest === "") return Either.left("empty duration")
  let sign = 1n
  if (rest[0] === "-" || rest[0] === "+") {
    if (rest[0] === "-") sign = -1n
    rest = rest.slice(1)
  }
  if (rest === "0") return Either.right(0n)
  if (rest === "") return Either.left(`invalid duration "${original}"`)
  let total = 0n
  while (rest !== "") {
    const match = COMPONENT.exec(rest)
    if (match === null) return Either.left(`invalid duration "${original}"`)
    const [whole, intPart = "", fracPart, unit = ""] = match
    if (intPart === "" && (fracPart === undefined || fracPart === "")) {
      return Either.left(`invalid duration "${original}"`)
    }
    const perUnit = NANOS_PER_UNIT[unit]
    if (perUnit === undefined) return Either.left(`unknown unit "${unit}" in duration "${original}"`)
    let value = BigInt(intPart === "" ? "0" : intPart) * perUnit
    if (fracPart !== undefined && fracPart !== "") {
      // Fraction of the unit, truncated to whole nanoseconds as Go does.
      const scale = 10n ** BigInt(fracPart.length)
      value += (BigInt(fracPart) * perUnit) / scale
    }
    total += value
    // Go's int64 range: one more nanosecond fits on the negative side.
    if (total > (sign < 0n ? MAX_INT64 + 1n : MAX_INT64)) {
      return Either.left(`invalid duration "${original}": overflows int64 nanoseconds`)
    }
    rest = rest.slice(whole.length)
  }
  return Either.right(sign * total)
}

/**
 * Parses a Go duration into an Effect Duration. Negative values become zero: every variable of
 * the spec that admits them treats "zero or less" alike.
 */
export const parseGoDuration = (input: string): Either.Either<Duration.Duration, string> =>
  Either.map(parseGoDurationNanos(input), (nanos) => Duration.nanos(nanos < 0n ? 0n : nanos))

const fraction = (value: bigint, digits: number): string => {
  const text = value.toString().padStart(digits, "0").replace(/0+$/, "")
  return text === "" ? "" : `.${text}`
}

/** Formats nanoseconds the way Go's time.Duration.String does (`1h0m0s`, `100ms`, `1.5s`). */
export const formatGoDurationNanos = (nanos: bigint): string => {
  if (nanos === 0n) return "0s"
  const negative = nanos < 0n
  const n = negative ? -nanos : nanos
  const sign = negative ? "-" : ""
  if (n < 1_000n) return `${sign}${n}ns`
  if (n < 1_000_000n) return `${sign}${n / 1_000n}${fraction(n % 1_000n, 3)}\u00b5s`
  if (n < 1_000_000_000n) return `${sign}${n / 1_000_000n}${fraction(n % 1_000_000n, 6)}ms`
  const hours = n / 3_600_000_000_000n
  const minutes = (n / 60_000_000_000n) % 60n
  const seconds = (n / 1_000_000_000n) % 60n
  const secondsText = `${seconds}${fraction(n % 1_000_000_000n, 9)}s`
  if (hours > 0n) return `${sign}${hours}h${minutes}m${secondsText}`
  if (minutes > 0n) return `${sign}${minutes}m${secondsText}`
  return `${sign}${secondsText}`
}

export const formatGoDuration = (duration: Duration.Duration): string => {
  const nanos = Duration.toNanos(duration)
  // Infinite durations have no nanosecond value; show the int64 maximum Go would print.
  return formatGoDurationNanos(nanos._tag === "Some" ? nanos.value : MAX_INT64)
}
