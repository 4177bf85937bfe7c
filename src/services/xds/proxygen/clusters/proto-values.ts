/** Small proto value shapes the cluster builders share: durations, wrappers, the SDS sources. */
import { Either } from "effect"
import { parseGoDurationNanos } from "../../../config/duration.js"
import type { Duration, Struct, Value } from "../../protocol/xds-types.js"

/** A `google.protobuf.Duration` of nanoseconds. */
export const durationOfNanos = (nanos: bigint): Duration => ({
  seconds: (nanos / 1_000_000_000n).toString(),
  nanos: Number(nanos % 1_000_000_000n),
})

export const durationOfMs = (ms: number): Duration => durationOfNanos(BigInt(Math.max(0, Math.round(ms))) * 1_000_000n)

/** Nanoseconds of a Go duration string (the config schemas validated it); undefined when absent or bad. */
export const nanosOf = (text: string | undefined): bigint | undefined => {
  if (text === undefined) return undefined
  const parsed = parseGoDurationNanos(text)
  return Either.isRight(parsed) ? parsed.right : undefined
}

/** A Go duration string as a Duration; undefined when absent, bad or not positive (`validate.rules` gt 0). */
export const positiveDuration = (text: string | undefined): Duration | undefined => {
  const nanos = nanosOf(text)
  return nanos !== undefined && nanos > 0n ? durationOfNanos(nanos) : undefined
}

/** Whole seconds of a Go duration string (TCP keepalive takes seconds). */
export const secondsOf = (text: string | undefined): number | undefined => {
  const nanos = nanosOf(text)
  return nanos === undefined ? undefined : Number(nanos / 1_000_000_000n)
}

/** The largest uint32: the reference's "no limit" for circuit breakers. */
export const MAX_UINT32 = 4294967295

export { adsSdsSecret, agentSdsSecret } from "../sds.js"

/**
 * A plain JSON object as a `google.protobuf.Struct`: the codec takes Structs in their proto
 * shape, and the well-known types' field names camel-cased (`stringValue`), unlike the rest.
 */
export const toStruct = (value: Readonly<Record<string, unknown>>): Struct => {
  const entries = Object.entries(value)
  return entries.length === 0 ? {} : { fields: Object.fromEntries(entries.map(([k, v]) => [k, toValue(v)])) }
}

const toValue = (value: unknown): Value => {
  if (typeof value === "string") return { stringValue: value }
  if (typeof value === "number") return { numberValue: value }
  if (typeof value === "boolean") return { boolValue: value }
  if (Array.isArray(value)) return { listValue: { values: value.map(toValue) } }
  if (value !== null && typeof value === "object") return { structValue: toStruct(value as Record<string, unknown>) }
  return { nullValue: "NULL_VALUE" }
}
