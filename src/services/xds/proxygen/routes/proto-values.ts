/**
 * Small Envoy value builders the route translation shares: durations, fractional percents,
 * string matchers and header operations, written as the v3 protos spell them (snake_case field
 * names, 64-bit integers as strings, enums as names).
 */
import { Either } from "effect"
import { parseGoDurationNanos } from "../../../config/duration.js"
import type {
  Duration,
  Envoy_Type_Matcher_StringMatcher,
  FractionalPercent,
  HeaderValueOption,
  WeightedCluster_ClusterWeight,
} from "../../protocol/xds-types.js"

/** A `google.protobuf.Duration` of `nanos`. */
export const durationOf = (nanos: bigint): Duration => ({
  seconds: (nanos / 1_000_000_000n).toString(),
  nanos: Number(nanos % 1_000_000_000n),
})

/** The zero Duration: "disabled" for route timeouts, as the reference writes it. */
export const ZERO_DURATION: Duration = durationOf(0n)

/** Nanoseconds of a Go-style duration string; undefined when absent or malformed (the schema rejects those). */
export const nanosOf = (value: string | undefined): bigint | undefined => {
  if (value === undefined || value === "") return undefined
  const parsed = parseGoDurationNanos(value)
  return Either.isRight(parsed) ? parsed.right : undefined
}

/** A Percent (0–100, a double) as a `type.v3.FractionalPercent` per million, as the reference does. */
export const percentPerMillion = (value: number): FractionalPercent => ({
  numerator: Math.round(Math.max(0, Math.min(100, value)) * 10_000),
  denominator: "MILLION",
})

/** An integer percent as a `type.v3.FractionalPercent` per hundred (the deprecated integer fields). */
export const percentPerHundred = (value: number): FractionalPercent => ({
  numerator: Math.max(0, Math.min(100, Math.trunc(value))),
  denominator: "HUNDRED",
})

export interface StringMatchSpec {
  readonly exact?: string | undefined
  readonly prefix?: string | undefined
  readonly regex?: string | undefined
}

/** A StringMatch as `type.matcher.v3.StringMatcher`; undefined when it sets no kind (a presence match). */
export const stringMatcher = (
  match: StringMatchSpec,
  ignoreCase = false,
): Envoy_Type_Matcher_StringMatcher | undefined => {
  const kind =
    match.exact !== undefined
      ? { exact: match.exact }
      : match.prefix !== undefined && match.prefix !== ""
        ? { prefix: match.prefix }
        : match.regex !== undefined
          ? { safe_regex: { regex: match.regex } }
          : undefined
  if (kind === undefined) return undefined
  return ignoreCase && match.regex === undefined ? { ...kind, ignore_case: true } : kind
}

/** The names of a record, sorted: header maps are written in a stable order. */
export const sortedEntries = <V>(record: Readonly<Record<string, V>> | undefined): ReadonlyArray<[string, V]> =>
  Object.entries(record ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

export interface HeaderOperationsSpec {
  readonly set?: Readonly<Record<string, string>> | undefined
  readonly add?: Readonly<Record<string, string>> | undefined
  readonly remove?: ReadonlyArray<string> | undefined
}

export interface HeadersSpec {
  readonly request?: HeaderOperationsSpec | undefined
  readonly response?: HeaderOperationsSpec | undefined
}

/** The header fields a Route and a ClusterWeight share. */
export type HeaderFields = Pick<
  WeightedCluster_ClusterWeight,
  "request_headers_to_add" | "request_headers_to_remove" | "response_headers_to_add" | "response_headers_to_remove"
>

/** What a VirtualService `headers` block becomes on a route or a weighted cluster. */
export interface HeaderMutations {
  readonly request_headers_to_add: ReadonlyArray<HeaderValueOption>
  readonly request_headers_to_remove: ReadonlyArray<string>
  readonly response_headers_to_add: ReadonlyArray<HeaderValueOption>
  readonly response_headers_to_remove: ReadonlyArray<string>
  /** A request `set` of `:authority` / `host`: a host rewrite, not a header (the proxy rejects those). */
  readonly authority?: string
}

const isAuthority = (name: string): boolean => {
  const lower = name.toLowerCase()
  return lower === ":authority" || lower === "host"
}

const headerOptions = (ops: HeaderOperationsSpec | undefined, request: boolean): ReadonlyArray<HeaderValueOption> => [
  ...sortedEntries(ops?.set)
    .filter(([name]) => !(request && isAuthority(name)))
    .map(
      ([key, value]): HeaderValueOption => ({ header: { key, value }, append_action: "OVERWRITE_IF_EXISTS_OR_ADD" }),
    ),
  ...sortedEntries(ops?.add)
    .filter(([name]) => !(request && isAuthority(name)))
    .map(([key, value]): HeaderValueOption => ({ header: { key, value }, append_action: "APPEND_IF_EXISTS_OR_ADD" })),
]

/** The header operations of a `headers` block (set overwrites, add appends, remove). */
export const headerMutations = (headers: HeadersSpec | undefined): HeaderMutations => {
  const authority = sortedEntries(headers?.request?.set).find(([name]) => isAuthority(name))?.[1]
  return {
    request_headers_to_add: headerOptions(headers?.request, true),
    request_headers_to_remove: [...(headers?.request?.remove ?? [])],
    response_headers_to_add: headerOptions(headers?.response, false),
    response_headers_to_remove: [...(headers?.response?.remove ?? [])],
    ...(authority !== undefined && authority !== "" ? { authority } : {}),
  }
}

/** The non-empty header fields of `mutations`, to spread into a Route or ClusterWeight. */
export const headerFields = (mutations: HeaderMutations): HeaderFields => {
  const out: { -readonly [K in keyof HeaderFields]: HeaderFields[K] } = {}
  if (mutations.request_headers_to_add.length > 0) out.request_headers_to_add = mutations.request_headers_to_add
  if (mutations.request_headers_to_remove.length > 0)
    out.request_headers_to_remove = mutations.request_headers_to_remove
  if (mutations.response_headers_to_add.length > 0) out.response_headers_to_add = mutations.response_headers_to_add
  if (mutations.response_headers_to_remove.length > 0)
    out.response_headers_to_remove = mutations.response_headers_to_remove
  return out
}
