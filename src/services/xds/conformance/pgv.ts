/**
 * The protos' own `validate.rules` (protoc-gen-validate annotations), checked as the data-plane
 * proxy checks them before accepting a resource: the rules are read from protobufjs reflection
 * (`parsedOptions`), so the check follows whatever the loaded .proto files say. Rules apply to
 * proto3 scalars even when unset (their default value is what the proxy sees); fields with
 * presence (messages, oneof members, `optional`) only when set. Any values are unpacked and
 * their content checked too, as the proxy does when it instantiates the extension.
 */
import type { Enum, Field, Root, Type } from "protobufjs"
import {
  ANY,
  anyType,
  child,
  enumNumber,
  enumTypeOf,
  FLOAT,
  hasPresence,
  index,
  isDefinedEnumNumber,
  isMapField,
  isObject,
  isSet,
  key,
  messageTypeOf,
  type Obj,
  type Problem,
} from "./reflect.js"

type Rules = Readonly<Record<string, unknown>>

const isRules = (v: unknown): v is Rules => typeof v === "object" && v !== null && !Array.isArray(v)

/** Deep merge of option objects (protobufjs may split one option over several entries). */
const merge = (a: Rules, b: Rules): Rules => {
  const out: Record<string, unknown> = { ...a }
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k]
    out[k] = isRules(prev) && isRules(v) ? merge(prev, v) : v
  }
  return out
}

const option = (parsed: ReadonlyArray<Rules> | null | undefined, name: string): unknown => {
  let found: unknown
  for (const entry of parsed ?? []) {
    if (!(name in entry)) continue
    const v = entry[name]
    found = isRules(found) && isRules(v) ? merge(found, v) : v
  }
  return found
}

const rulesCache = new WeakMap<Field, Rules | undefined>()
/** A field's `(validate.rules)`, merged. */
export const fieldRules = (field: Field): Rules | undefined => {
  if (!rulesCache.has(field)) {
    const r = option(field.parsedOptions as ReadonlyArray<Rules> | undefined, "(validate.rules)")
    rulesCache.set(field, isRules(r) ? r : undefined)
  }
  return rulesCache.get(field)
}

const num = (v: unknown): number => (typeof v === "number" ? v : Number(String(v)))
const show = (v: unknown): string => {
  const text = typeof v === "string" ? JSON.stringify(v) : String(v)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}
/** A repeated option written once (`not_in: 0`) comes back from protobufjs as a scalar. */
const many = (v: unknown): ReadonlyArray<unknown> | undefined =>
  v === undefined ? undefined : Array.isArray(v) ? v : [v]

const WRAPPERS: Readonly<Record<string, string>> = {
  ".google.protobuf.DoubleValue": "double",
  ".google.protobuf.FloatValue": "float",
  ".google.protobuf.Int64Value": "int64",
  ".google.protobuf.UInt64Value": "uint64",
  ".google.protobuf.Int32Value": "int32",
  ".google.protobuf.UInt32Value": "uint32",
  ".google.protobuf.BoolValue": "bool",
  ".google.protobuf.StringValue": "string",
  ".google.protobuf.BytesValue": "bytes",
}
const DURATION = ".google.protobuf.Duration"
const TIMESTAMP = ".google.protobuf.Timestamp"

interface Ctx {
  readonly root: Root
  readonly out: Array<Problem>
}

const fail = (ctx: Ctx, path: string, rule: string, detail: string): void => {
  ctx.out.push({ path, message: `(validate.rules).${rule} ${detail}` })
}

/** const / lt / lte / gt / gte / in / not_in over numbers, with PGV's "outside the range" form. */
const checkOrdered = (ctx: Ctx, path: string, kind: string, r: Rules, v: number, fmt = show): void => {
  const got = `(got ${fmt(v)})`
  if (isSet(r.const) && v !== num(r.const)) fail(ctx, path, `${kind}.const`, `= ${fmt(num(r.const))} ${got}`)
  const lower = isSet(r.gt) ? { at: num(r.gt), open: true } : isSet(r.gte) ? { at: num(r.gte), open: false } : undefined
  const upper = isSet(r.lt) ? { at: num(r.lt), open: true } : isSet(r.lte) ? { at: num(r.lte), open: false } : undefined
  const above = (b: { at: number; open: boolean }) => (b.open ? v > b.at : v >= b.at)
  const below = (b: { at: number; open: boolean }) => (b.open ? v < b.at : v <= b.at)
  const name = (b: { at: number; open: boolean }, gt: boolean) =>
    `${kind}.${gt ? (b.open ? "gt" : "gte") : b.open ? "lt" : "lte"} = ${fmt(b.at)}`
  if (lower !== undefined && upper !== undefined && lower.at > upper.at) {
    // PGV: a lower bound above the upper bound asks for a value outside [upper, lower].
    if (!above(lower) && !below(upper)) fail(ctx, path, `${name(lower, true)} or ${name(upper, false)}`, got)
  } else {
    if (lower !== undefined && !above(lower)) fail(ctx, path, name(lower, true), got)
    if (upper !== undefined && !below(upper)) fail(ctx, path, name(upper, false), got)
  }
  const inList = many(r.in)
  const notIn = many(r.not_in)
  if (inList !== undefined && inList.length > 0 && !inList.map(num).includes(v))
    fail(ctx, path, `${kind}.in`, `[${inList.map((x) => fmt(num(x))).join(", ")}] ${got}`)
  if (notIn?.map(num).includes(v)) fail(ctx, path, `${kind}.not_in`, `${got}`)
}

/** RFC 7230 token (with an optional leading `:` for pseudo-headers) and field-value; without
 * `strict`, PGV only refuses NUL, CR and LF (an empty string passes). */
const HEADER_NAME_STRICT = /^:?[0-9a-zA-Z!#$%&'*+\-.^_|~`]+$/
/** Control characters other than HTAB (strict field-value). */
const headerValueStrict = (s: string): boolean =>
  [...s].every((c) => {
    const code = c.codePointAt(0)!
    return !(code <= 8 || (code >= 10 && code <= 31) || code === 127)
  })
const headerLoose = (s: string): boolean => !/[\0\n\r]/.test(s)
const HOSTNAME =
  /^(?=.{1,253}$)([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*\.?$/
const IPV4 = /^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/
const isIpv6 = (s: string): boolean => {
  try {
    return s.includes(":") && new URL(`http://[${s}]/`).hostname !== ""
  } catch {
    return false
  }
}

const wellKnownString = (r: Rules, s: string): string | undefined => {
  if (r.well_known_regex === "HTTP_HEADER_NAME" || r.well_known_regex === 1) {
    const strict = r.strict !== false
    return (strict ? HEADER_NAME_STRICT.test(s) : headerLoose(s))
      ? undefined
      : `well_known_regex = HTTP_HEADER_NAME${strict ? "" : " (strict: false)"}`
  }
  if (r.well_known_regex === "HTTP_HEADER_VALUE" || r.well_known_regex === 2) {
    const strict = r.strict !== false
    return (strict ? headerValueStrict(s) : headerLoose(s))
      ? undefined
      : `well_known_regex = HTTP_HEADER_VALUE${strict ? "" : " (strict: false)"}`
  }
  if (r.hostname === true && !HOSTNAME.test(s)) return "hostname"
  if (r.ipv4 === true && !IPV4.test(s)) return "ipv4"
  if (r.ipv6 === true && !isIpv6(s)) return "ipv6"
  if (r.ip === true && !IPV4.test(s) && !isIpv6(s)) return "ip"
  if (r.address === true && !IPV4.test(s) && !isIpv6(s) && !HOSTNAME.test(s)) return "address"
  if (r.uuid === true && !UUID.test(s)) return "uuid"
  if (r.email === true && !/^[^@\s]+@[^@\s]+$/.test(s)) return "email"
  if (r.uri === true && !/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(s)) return "uri"
  return undefined
}

const checkString = (ctx: Ctx, path: string, r: Rules, s: string): void => {
  if (r.ignore_empty === true && s === "") return
  const runes = [...s].length
  const bytes = Buffer.byteLength(s, "utf8")
  const got = `(got ${show(s)})`
  if (isSet(r.const) && s !== r.const) fail(ctx, path, "string.const", `= ${show(r.const)} ${got}`)
  if (isSet(r.len) && runes !== num(r.len)) fail(ctx, path, "string.len", `= ${num(r.len)} ${got}`)
  if (isSet(r.min_len) && runes < num(r.min_len)) fail(ctx, path, "string.min_len", `= ${num(r.min_len)} ${got}`)
  if (isSet(r.max_len) && runes > num(r.max_len)) fail(ctx, path, "string.max_len", `= ${num(r.max_len)} ${got}`)
  if (isSet(r.len_bytes) && bytes !== num(r.len_bytes)) fail(ctx, path, "string.len_bytes", `= ${num(r.len_bytes)}`)
  if (isSet(r.min_bytes) && bytes < num(r.min_bytes))
    fail(ctx, path, "string.min_bytes", `= ${num(r.min_bytes)} ${got}`)
  if (isSet(r.max_bytes) && bytes > num(r.max_bytes))
    fail(ctx, path, "string.max_bytes", `= ${num(r.max_bytes)} ${got}`)
  if (typeof r.prefix === "string" && !s.startsWith(r.prefix))
    fail(ctx, path, "string.prefix", `= ${show(r.prefix)} ${got}`)
  if (typeof r.suffix === "string" && !s.endsWith(r.suffix))
    fail(ctx, path, "string.suffix", `= ${show(r.suffix)} ${got}`)
  if (typeof r.contains === "string" && !s.includes(r.contains))
    fail(ctx, path, "string.contains", `= ${show(r.contains)} ${got}`)
  if (typeof r.not_contains === "string" && s.includes(r.not_contains))
    fail(ctx, path, "string.not_contains", `= ${show(r.not_contains)} ${got}`)
  const inList = many(r.in)
  if (inList !== undefined && inList.length > 0 && !inList.includes(s)) fail(ctx, path, "string.in", got)
  if (many(r.not_in)?.includes(s)) fail(ctx, path, "string.not_in", got)
  if (typeof r.pattern === "string") {
    let re: RegExp | undefined
    try {
      re = new RegExp(r.pattern, "u")
    } catch {
      re = undefined // an RE2-only pattern: not checked here
    }
    if (re !== undefined && !re.test(s)) fail(ctx, path, "string.pattern", `= ${show(r.pattern)} ${got}`)
  }
  const wk = wellKnownString(r, s)
  if (wk !== undefined) fail(ctx, path, `string.${wk}`, `${wk.includes("=") ? "" : "expected "}${got}`)
}

const bytesOf = (v: unknown): Buffer =>
  v instanceof Uint8Array ? Buffer.from(v) : typeof v === "string" ? Buffer.from(v, "base64") : Buffer.alloc(0)

const checkBytes = (ctx: Ctx, path: string, r: Rules, v: unknown): void => {
  const b = bytesOf(v)
  if (r.ignore_empty === true && b.length === 0) return
  if (isSet(r.len) && b.length !== num(r.len)) fail(ctx, path, "bytes.len", `= ${num(r.len)} (got ${b.length})`)
  if (isSet(r.min_len) && b.length < num(r.min_len))
    fail(ctx, path, "bytes.min_len", `= ${num(r.min_len)} (got ${b.length})`)
  if (isSet(r.max_len) && b.length > num(r.max_len))
    fail(ctx, path, "bytes.max_len", `= ${num(r.max_len)} (got ${b.length})`)
  if (isSet(r.const) && !b.equals(bytesOf(r.const))) fail(ctx, path, "bytes.const", "not equal")
  if (isSet(r.prefix) && !b.subarray(0, bytesOf(r.prefix).length).equals(bytesOf(r.prefix)))
    fail(ctx, path, "bytes.prefix", "not matched")
}

const nanosOf = (v: unknown): number => (isObject(v) ? num(v.seconds ?? 0) * 1e9 + num(v.nanos ?? 0) : 0)
const showNanos = (n: number): string => `${n / 1e9}s`

const checkEnum = (ctx: Ctx, path: string, e: Enum, r: Rules, v: unknown): void => {
  const n = v === undefined ? 0 : enumNumber(e, v)
  if (n === undefined) return // an unknown name is a shape problem
  const nameOf = (x: number) => Object.entries(e.values).find(([, y]) => y === x)?.[0] ?? String(x)
  if (r.defined_only === true && !isDefinedEnumNumber(e, n))
    fail(ctx, path, "enum.defined_only", `(got ${n}, not a ${e.name} value)`)
  checkOrdered(ctx, path, "enum", { const: r.const, in: r.in, not_in: r.not_in }, n, (x) => nameOf(Number(x)))
}

const scalarDefault = (type: string): unknown =>
  type === "string" ? "" : type === "bool" ? false : type === "bytes" ? "" : 0

/** Rules of one scalar kind (`uint32`, `string`, ...) against a value. */
const checkScalar = (ctx: Ctx, path: string, type: string, all: Rules, v: unknown): void => {
  const r = all[type]
  if (!isRules(r)) return
  if (type === "string") {
    if (typeof v === "string") checkString(ctx, path, r, v)
    return
  }
  if (type === "bytes") {
    checkBytes(ctx, path, r, v)
    return
  }
  if (type === "bool") {
    if (isSet(r.const) && v !== r.const) fail(ctx, path, "bool.const", `= ${show(r.const)} (got ${show(v)})`)
    return
  }
  const n = num(v)
  if (!Number.isFinite(n) && !FLOAT.has(type)) return // a shape problem
  if (r.ignore_empty === true && n === 0) return
  checkOrdered(ctx, path, type, r, n)
}

const checkAnyRules = (ctx: Ctx, path: string, r: Rules, v: unknown): void => {
  if (r.required === true && !isSet(v)) {
    fail(ctx, path, "any.required", "(not set)")
    return
  }
  if (!isObject(v)) return
  const url = typeof v["@type"] === "string" ? v["@type"] : typeof v.type_url === "string" ? v.type_url : ""
  const inList = many(r.in)
  if (inList !== undefined && inList.length > 0 && !inList.includes(url)) fail(ctx, path, "any.in", `(got ${url})`)
  if (many(r.not_in)?.includes(url)) fail(ctx, path, "any.not_in", `(got ${url})`)
}

/** One (non-repeated) value of `field` (or one element of a repeated one) against `rules`. */
const checkSingle = (ctx: Ctx, field: Field, rules: Rules | undefined, v: unknown, path: string, presence: boolean) => {
  const message = messageTypeOf(field)
  // An unset oneof member has no rules to meet (not even message.required).
  if (!isSet(v) && field.partOf !== null && field.partOf !== undefined) return
  if (message !== undefined) {
    const full = message.fullName
    const m = isRules(rules?.message) ? rules.message : undefined
    if (m?.required === true && !isSet(v)) fail(ctx, path, "message.required", "(not set)")
    if (rules !== undefined && full === DURATION && isRules(rules.duration)) {
      const d = rules.duration
      if (d.required === true && !isSet(v)) fail(ctx, path, "duration.required", "(not set)")
      if (isSet(v)) {
        const toNanos = (x: unknown) => (Array.isArray(x) ? x.map(nanosOf) : isSet(x) ? nanosOf(x) : undefined)
        checkOrdered(
          ctx,
          path,
          "duration",
          {
            const: toNanos(d.const),
            lt: toNanos(d.lt),
            lte: toNanos(d.lte),
            gt: toNanos(d.gt),
            gte: toNanos(d.gte),
            in: toNanos(d.in),
            not_in: toNanos(d.not_in),
          },
          nanosOf(v),
          (x) => showNanos(Number(x)),
        )
      }
    }
    if (rules !== undefined && full === TIMESTAMP && isRules(rules.timestamp)) {
      if (rules.timestamp.required === true && !isSet(v)) fail(ctx, path, "timestamp.required", "(not set)")
    }
    if (rules !== undefined && full === ANY && isRules(rules.any)) checkAnyRules(ctx, path, rules.any, v)
    const wrapped = WRAPPERS[full]
    if (wrapped !== undefined && rules !== undefined && isObject(v))
      checkScalar(ctx, path, wrapped, rules, isSet(v.value) ? v.value : scalarDefault(wrapped))
    if (isSet(v) && m?.skip !== true) checkMessage(ctx, message, v, path)
    return
  }
  if (!isSet(v) && presence) return
  const enumType = enumTypeOf(field)
  if (enumType !== undefined) {
    if (rules !== undefined && isRules(rules.enum)) checkEnum(ctx, path, enumType, rules.enum, isSet(v) ? v : undefined)
    return
  }
  if (rules !== undefined) checkScalar(ctx, path, field.type, rules, isSet(v) ? v : scalarDefault(field.type))
}

const uniqueKey = (v: unknown): string =>
  JSON.stringify(v, (_, x) => (x instanceof Uint8Array ? Buffer.from(x).toString("base64") : x))

const checkField = (ctx: Ctx, field: Field, v: unknown, path: string): void => {
  const rules = fieldRules(field)
  if (isMapField(field)) {
    const entries = isObject(v) ? Object.entries(v) : []
    const r = isRules(rules?.map) ? rules.map : undefined
    if (r !== undefined && !(r.ignore_empty === true && entries.length === 0)) {
      if (isSet(r.min_pairs) && entries.length < num(r.min_pairs))
        fail(ctx, path, "map.min_pairs", `= ${num(r.min_pairs)} (got ${entries.length})`)
      if (isSet(r.max_pairs) && entries.length > num(r.max_pairs))
        fail(ctx, path, "map.max_pairs", `= ${num(r.max_pairs)} (got ${entries.length})`)
    }
    for (const [k, entry] of entries) {
      if (r !== undefined && isRules(r.keys)) {
        const keyType = field.keyType
        checkScalar(ctx, key(path, k), keyType, r.keys, keyType === "string" ? k : Number(k))
      }
      checkSingle(ctx, field, r !== undefined && isRules(r.values) ? r.values : undefined, entry, key(path, k), true)
    }
    return
  }
  if (field.repeated) {
    const items = Array.isArray(v) ? v : []
    const r = isRules(rules?.repeated) ? rules.repeated : undefined
    if (r !== undefined && !(r.ignore_empty === true && items.length === 0)) {
      if (isSet(r.min_items) && items.length < num(r.min_items))
        fail(ctx, path, "repeated.min_items", `= ${num(r.min_items)} (got ${items.length})`)
      if (isSet(r.max_items) && items.length > num(r.max_items))
        fail(ctx, path, "repeated.max_items", `= ${num(r.max_items)} (got ${items.length})`)
      if (r.unique === true) {
        const seen = new Set<string>()
        items.forEach((item, i) => {
          const k = uniqueKey(item)
          if (seen.has(k)) fail(ctx, index(path, i), "repeated.unique", `(duplicate ${k})`)
          seen.add(k)
        })
      }
    }
    const itemRules = r !== undefined && isRules(r.items) ? r.items : undefined
    items.forEach((item, i) => {
      checkSingle(ctx, field, itemRules, item, index(path, i), true)
    })
    return
  }
  checkSingle(ctx, field, rules, v, path, hasPresence(field))
}

const messageDisabled = (type: Type): boolean => {
  const parsed = type.parsedOptions as ReadonlyArray<Rules> | undefined
  return option(parsed, "(validate.disabled)") === true || option(parsed, "(validate.ignored)") === true
}

const checkMessage = (ctx: Ctx, type: Type, v: unknown, path: string): void => {
  if (!isObject(v)) return // a shape problem
  if (type.fullName === ANY) {
    const url = typeof v["@type"] === "string" ? v["@type"] : undefined
    const inner = url === undefined ? undefined : anyType(ctx.root, url)
    if (inner !== undefined) checkMessage(ctx, inner, v, path)
    return
  }
  if (messageDisabled(type)) return
  for (const field of type.fieldsArray) checkField(ctx, field, (v as Obj)[field.name], child(path, field.name))
  for (const oneof of type.oneofsArray) {
    const required = option(oneof.parsedOptions as ReadonlyArray<Rules> | undefined, "(validate.required)")
    if (required === true && !oneof.oneof.some((name) => isSet(v[name])))
      ctx.out.push({
        path: child(path, oneof.name),
        message: `(validate.required) oneof: one of ${oneof.oneof.join(", ")} must be set`,
      })
  }
}

/** Every `validate.rules` violation of `value` as the message `type` (full name or type URL). */
export const pgvProblems = (root: Root, type: string, value: unknown): ReadonlyArray<Problem> => {
  const message = anyType(root, type)
  if (message === undefined) return [{ path: "", message: `unknown message type ${type}` }]
  const ctx: Ctx = { root, out: [] }
  checkMessage(ctx, message, value, "")
  return ctx.out
}
