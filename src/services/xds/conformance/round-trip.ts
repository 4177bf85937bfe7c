/**
 * Whether a resource survives the codec: the generator's object and what the codec gives back
 * after encoding and decoding it, compared in one canonical form (64-bit integers as decimal
 * strings, enums by name, bytes as base64, floats at float precision, proto3 defaults left out,
 * as the wire drops them). A difference is something the encoder dropped or changed — an unknown
 * field, an Any whose type the codec's protos lack — which the proxy then never sees.
 */
import type { Field, Root, Type } from "protobufjs"
import {
  ANY,
  anyType,
  child,
  enumTypeOf,
  FLOAT,
  hasPresence,
  INT64,
  index,
  isMapField,
  isObject,
  isSet,
  messageTypeOf,
  type Obj,
  type Problem,
} from "./reflect.js"

const isDefault = (v: unknown): boolean =>
  v === 0 || v === "0" || v === "" || v === false || (Array.isArray(v) && v.length === 0)

const scalar = (field: Field, v: unknown): unknown => {
  const e = enumTypeOf(field)
  if (e !== undefined) {
    if (typeof v === "number") return Object.entries(e.values).find(([, n]) => n === v)?.[0] ?? v
    return v
  }
  if (INT64.has(field.type)) {
    try {
      return BigInt(String(v)).toString()
    } catch {
      return v
    }
  }
  if (FLOAT.has(field.type) && typeof v === "number") return field.type === "float" ? Math.fround(v) : v
  if (field.type === "bytes") {
    if (v instanceof Uint8Array) return Buffer.from(v).toString("base64")
    if (typeof v === "string") return Buffer.from(v, "base64").toString("base64")
  }
  return v
}

const enumZero = (field: Field, v: unknown): boolean => {
  const e = enumTypeOf(field)
  return e !== undefined && (v === 0 || (typeof v === "string" && e.values[v] === 0))
}

const value = (root: Root, field: Field, v: unknown): unknown => {
  const message = messageTypeOf(field)
  return message !== undefined ? canonical(root, message, v) : scalar(field, v)
}

/** The canonical form of `v` as `type` (unknown fields left out: the shape check reports them). */
export const canonical = (root: Root, type: Type, v: unknown): unknown => {
  if (!isObject(v)) return v
  if (type.fullName === ANY) {
    const url = v["@type"]
    const inner = typeof url === "string" ? anyType(root, url) : undefined
    if (inner === undefined) return { ...v }
    const body = canonical(root, inner, v) as Obj
    return { "@type": url, ...body }
  }
  const out: Record<string, unknown> = {}
  for (const field of type.fieldsArray) {
    const raw = v[field.name]
    if (!isSet(raw)) continue
    if (isMapField(field)) {
      if (!isObject(raw) || Object.keys(raw).length === 0) continue
      out[field.name] = Object.fromEntries(Object.entries(raw).map(([k, x]) => [k, value(root, field, x)]))
    } else if (field.repeated) {
      if (!Array.isArray(raw) || raw.length === 0) continue
      out[field.name] = raw.map((x) => value(root, field, x))
    } else {
      const c = value(root, field, raw)
      if (!hasPresence(field) && (isDefault(c) || enumZero(field, raw))) continue
      out[field.name] = c
    }
  }
  return out
}

const describe = (v: unknown): string => {
  const text = JSON.stringify(v)
  return text === undefined ? String(v) : text.length > 80 ? `${text.slice(0, 77)}...` : text
}

const diff = (before: unknown, after: unknown, path: string, out: Array<Problem>): void => {
  if (isObject(before) && isObject(after)) {
    if (typeof before["@type"] === "string" && after["@type"] !== before["@type"]) {
      out.push({ path, message: `Any of type ${before["@type"]} did not survive the codec (its .proto is not loaded)` })
      return
    }
    for (const k of Object.keys(before)) {
      const at = k === "@type" ? child(path, "@type") : child(path, k)
      if (!(k in after)) out.push({ path: at, message: `dropped by the codec (was ${describe(before[k])})` })
      else diff(before[k], after[k], at, out)
    }
    for (const k of Object.keys(after))
      if (!(k in before)) out.push({ path: child(path, k), message: `added by the codec: ${describe(after[k])}` })
    return
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    if (before.length !== after.length)
      out.push({ path, message: `${before.length} elements became ${after.length} in the codec` })
    before.forEach((x, i) => {
      if (i < after.length) diff(x, after[i], index(path, i), out)
    })
    return
  }
  if (JSON.stringify(before) !== JSON.stringify(after))
    out.push({ path, message: `changed by the codec: ${describe(before)} became ${describe(after)}` })
}

/**
 * The differences between a resource and its decoded round trip, both read as `type` (a full
 * name or type URL) in `root`. `root` should know every type (so the comparison sees Any
 * contents); the codec under test may know fewer, which is what this finds.
 */
export const roundTripProblems = (
  root: Root,
  type: string,
  input: unknown,
  decoded: unknown,
): ReadonlyArray<Problem> => {
  const message = anyType(root, type)
  if (message === undefined) return [{ path: "", message: `unknown message type ${type}` }]
  const out: Array<Problem> = []
  diff(canonical(root, message, input), canonical(root, message, decoded), "", out)
  return out
}
