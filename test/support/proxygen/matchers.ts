/**
 * Envoy's matchers, as the evaluator reads them from generated resources: StringMatcher,
 * HeaderMatcher, query parameter matchers, CIDR ranges. Regexes are RE2 in Envoy and matched as
 * whole strings; JavaScript's RegExp is close enough for the patterns the generators write.
 */
import type { ProtoObject } from "../../../src/services/xds/cache/resource-spec.js"

export type Obj = ProtoObject

export const obj = (v: unknown): Obj | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : undefined
export const arr = (v: unknown): ReadonlyArray<Obj> =>
  Array.isArray(v) ? v.filter((x): x is Obj => obj(x) !== undefined) : []
export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined)
export const int = (v: unknown): number | undefined =>
  typeof v === "number" ? v : typeof v === "string" && v !== "" && !Number.isNaN(Number(v)) ? Number(v) : undefined
/** A google.protobuf wrapper (`{value}`) or a bare value. */
export const wrapped = (v: unknown): unknown => (obj(v) !== undefined && "value" in obj(v)! ? obj(v)!.value : v)

const fullRegex = (pattern: string, flags = ""): RegExp => new RegExp(`^(?:${pattern})$`, flags)

/** envoy.type.matcher.v3.StringMatcher. */
export const stringMatches = (m: Obj | undefined, value: string): boolean => {
  if (m === undefined) return false
  const ic = m.ignore_case === true
  const v = ic ? value.toLowerCase() : value
  const t = (x: unknown) => (ic ? String(x).toLowerCase() : String(x))
  if (m.exact !== undefined) return v === t(m.exact)
  if (m.prefix !== undefined) return v.startsWith(t(m.prefix))
  if (m.suffix !== undefined) return v.endsWith(t(m.suffix))
  if (m.contains !== undefined) return v.includes(t(m.contains))
  const regex = str(obj(m.safe_regex)?.regex)
  if (regex !== undefined) return fullRegex(regex).test(value)
  return false
}

export type Headers = Readonly<Record<string, string>>

/** envoy.config.route.v3.HeaderMatcher against request headers (names lower case). */
export const headerMatches = (m: Obj, headers: Headers): boolean => {
  const name = String(m.name ?? "").toLowerCase()
  let value = headers[name]
  if (value === undefined && m.treat_missing_header_as_empty === true) value = ""
  const invert = m.invert_match === true
  const result = (matched: boolean) => (invert ? !matched : matched)
  if (m.present_match !== undefined) return result((value !== undefined) === (m.present_match === true))
  if (value === undefined) return false // a missing header matches nothing, inverted or not
  if (m.exact_match !== undefined) return result(value === m.exact_match)
  if (m.prefix_match !== undefined) return result(value.startsWith(String(m.prefix_match)))
  if (m.suffix_match !== undefined) return result(value.endsWith(String(m.suffix_match)))
  if (m.contains_match !== undefined) return result(value.includes(String(m.contains_match)))
  const regex = str(obj(m.safe_regex_match)?.regex)
  if (regex !== undefined) return result(fullRegex(regex).test(value))
  if (m.string_match !== undefined) return result(stringMatches(obj(m.string_match), value))
  const range = obj(m.range_match)
  if (range !== undefined) {
    const n = Number(value)
    return result(Number.isInteger(n) && n >= Number(range.start) && n < Number(range.end))
  }
  return result(true) // no specifier: presence
}

/** envoy.config.route.v3.QueryParameterMatcher. */
export const queryMatches = (m: Obj, query: Readonly<Record<string, string>>): boolean => {
  const value = query[String(m.name)]
  if (m.present_match !== undefined) return (value !== undefined) === (m.present_match === true)
  if (value === undefined) return false
  if (m.string_match !== undefined) return stringMatches(obj(m.string_match), value)
  return true
}

const ipv4 = (ip: string): bigint | undefined => {
  const parts = ip.split(".")
  if (parts.length !== 4 || parts.some((p) => !/^\d+$/.test(p) || Number(p) > 255)) return undefined
  return parts.reduce((n, p) => (n << 8n) | BigInt(p), 0n)
}

/** envoy.config.core.v3.CidrRange containing an IPv4 address; the prefix length, or -1. */
export const cidrPrefixMatch = (range: Obj, ip: string): number => {
  const base = ipv4(String(range.address_prefix ?? ""))
  const addr = ipv4(ip)
  if (base === undefined || addr === undefined) return String(range.address_prefix) === ip ? 128 : -1
  const len = int(wrapped(range.prefix_len)) ?? 32
  const mask = len === 0 ? 0n : ((1n << 32n) - 1n) ^ ((1n << BigInt(32 - len)) - 1n)
  return (base & mask) === (addr & mask) ? len : -1
}
