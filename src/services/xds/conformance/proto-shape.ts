/**
 * Proto conformance of a resource given as a plain object (the generators' ProtoObject form:
 * proto field names, `"@type"` on Any values, enums by name, 64-bit integers as strings,
 * durations as `{seconds, nanos}`): every field must exist in the message, hold the right kind of
 * value, name a defined enum value, and every Any must name a type the proto tree knows. The
 * codec drops what it does not know without a word, and the proxy rejects what it cannot parse,
 * so each of these is reported with its path instead.
 */
import type { Field, Root, Type } from "protobufjs"
import {
  ANY,
  anyType,
  child,
  enumTypeOf,
  FLOAT,
  INT32,
  INT64,
  index,
  isMapField,
  isObject,
  isSet,
  key,
  messageTypeOf,
  type Obj,
  type Problem,
  UINT32,
} from "./reflect.js"

const DURATION = ".google.protobuf.Duration"
const TIMESTAMP = ".google.protobuf.Timestamp"
/** google.protobuf.Duration's range (about 10,000 years), which the proxy enforces. */
const MAX_DURATION_SECONDS = 315_576_000_000

const kindOf = (v: unknown): string =>
  Array.isArray(v) ? "array" : v instanceof Uint8Array ? "bytes" : v === null ? "null" : typeof v

const INT64_TEXT = /^-?\d+$/

const int64Problem = (type: string, v: unknown): string | undefined => {
  let big: bigint
  if (typeof v === "string") {
    if (!INT64_TEXT.test(v)) return `${type} expects an integer (as a string), got ${JSON.stringify(v)}`
    big = BigInt(v)
  } else if (typeof v === "number") {
    if (!Number.isSafeInteger(v)) return `${type} expects an integer, got ${v}`
    big = BigInt(v)
  } else if (typeof v === "bigint") {
    big = v
  } else return `${type} expects an integer (as a string), got ${kindOf(v)}`
  const unsigned = type.startsWith("u") || type === "fixed64"
  if (unsigned ? big < 0n || big >= 2n ** 64n : big < -(2n ** 63n) || big >= 2n ** 63n)
    return `${type} out of range: ${String(v)}`
  return undefined
}

/** What is wrong with a scalar value for its field type; undefined when fine. */
export const scalarProblem = (type: string, v: unknown): string | undefined => {
  if (type === "string") return typeof v === "string" ? undefined : `string expected, got ${kindOf(v)}`
  if (type === "bool") return typeof v === "boolean" ? undefined : `bool expected, got ${kindOf(v)}`
  if (type === "bytes")
    return typeof v === "string" || v instanceof Uint8Array ? undefined : `bytes expected, got ${kindOf(v)}`
  if (FLOAT.has(type))
    return typeof v === "number" || v === "NaN" || v === "Infinity" || v === "-Infinity"
      ? undefined
      : `${type} expected, got ${kindOf(v)}`
  if (INT64.has(type)) return int64Problem(type, v)
  if (INT32.has(type) || UINT32.has(type)) {
    if (typeof v !== "number" || !Number.isInteger(v)) return `${type} expects an integer number, got ${kindOf(v)}`
    const [lo, hi] = UINT32.has(type) ? [0, 2 ** 32 - 1] : [-(2 ** 31), 2 ** 31 - 1]
    return v < lo || v > hi ? `${type} out of range: ${v}` : undefined
  }
  return undefined
}

const MAP_KEY_INT = /^-?\d+$/

const mapKeyProblem = (keyType: string, k: string): string | undefined => {
  if (keyType === "string") return undefined
  if (keyType === "bool") return k === "true" || k === "false" ? undefined : `bool map key expected, got "${k}"`
  return MAP_KEY_INT.test(k) ? undefined : `${keyType} map key expected, got "${k}"`
}

const durationProblems = (v: Obj, path: string, out: Array<Problem>, timestamp: boolean): void => {
  const seconds = Number(v.seconds ?? 0)
  const nanos = Number(v.nanos ?? 0)
  if (!Number.isFinite(seconds) || !Number.isFinite(nanos)) return // reported as a type problem
  if (timestamp) {
    if (nanos < 0 || nanos > 999_999_999) out.push({ path, message: `timestamp nanos out of range: ${nanos}` })
    return
  }
  if (Math.abs(seconds) > MAX_DURATION_SECONDS) out.push({ path, message: `duration seconds out of range: ${seconds}` })
  if (Math.abs(nanos) > 999_999_999) out.push({ path, message: `duration nanos out of range: ${nanos}` })
  if ((seconds > 0 && nanos < 0) || (seconds < 0 && nanos > 0))
    out.push({ path, message: "duration seconds and nanos have different signs" })
}

/** The oneof name proto-loader writes beside a set member when decoding (`oneofs: true`). */
const isOneofMarker = (type: Type, name: string, v: unknown): boolean => {
  const oneof = type.oneofs?.[name]
  return oneof !== undefined && typeof v === "string" && oneof.oneof.includes(v)
}

const checkValue = (root: Root, field: Field, v: unknown, path: string, out: Array<Problem>): void => {
  const message = messageTypeOf(field)
  if (message !== undefined) {
    checkMessage(root, message, v, path, out)
    return
  }
  const enumType = enumTypeOf(field)
  if (enumType !== undefined) {
    if (typeof v === "string") {
      if (!Object.hasOwn(enumType.values, v))
        out.push({ path, message: `unknown ${enumType.name} value ${JSON.stringify(v)}` })
    } else if (typeof v !== "number" || !Number.isInteger(v))
      out.push({ path, message: `enum ${enumType.name} expects a value name, got ${kindOf(v)}` })
    return
  }
  const problem = scalarProblem(field.type, v)
  if (problem !== undefined) out.push({ path, message: problem })
}

const checkAny = (root: Root, v: Obj, path: string, out: Array<Problem>): void => {
  const url = v["@type"]
  if (url === undefined) {
    if (typeof v.type_url === "string") {
      if (anyType(root, v.type_url) === undefined)
        out.push({ path, message: `Any type ${v.type_url} is not a known message` })
      return
    }
    out.push({ path, message: 'Any without "@type"' })
    return
  }
  if (typeof url !== "string") {
    out.push({ path, message: `Any "@type" must be a string, got ${kindOf(url)}` })
    return
  }
  const type = anyType(root, url)
  if (type === undefined) {
    out.push({ path, message: `Any type ${url} is not a known message` })
    return
  }
  const { "@type": _, ...rest } = v
  checkFields(root, type, rest, path, out)
}

const checkFields = (root: Root, type: Type, v: Obj, path: string, out: Array<Problem>): void => {
  for (const [name, value] of Object.entries(v)) {
    if (!isSet(value)) continue
    const field = type.fields[name]
    if (field === undefined) {
      if (isOneofMarker(type, name, value)) continue
      out.push({ path: child(path, name), message: `unknown field of ${type.fullName.slice(1)}` })
      continue
    }
    const at = child(path, name)
    if (isMapField(field)) {
      if (!isObject(value)) {
        out.push({ path: at, message: `map expected (an object), got ${kindOf(value)}` })
        continue
      }
      for (const [k, entry] of Object.entries(value)) {
        const keyProblem = mapKeyProblem(field.keyType, k)
        if (keyProblem !== undefined) out.push({ path: key(at, k), message: keyProblem })
        if (isSet(entry)) checkValue(root, field, entry, key(at, k), out)
      }
    } else if (field.repeated) {
      if (!Array.isArray(value)) {
        out.push({ path: at, message: `repeated field expects an array, got ${kindOf(value)}` })
        continue
      }
      value.forEach((item, i) => {
        if (!isSet(item)) out.push({ path: index(at, i), message: "null element in a repeated field" })
        else checkValue(root, field, item, index(at, i), out)
      })
    } else checkValue(root, field, value, at, out)
  }
  for (const oneof of type.oneofsArray) {
    const set = oneof.oneof.filter((name) => isSet(v[name]))
    if (set.length > 1)
      out.push({ path: child(path, oneof.name), message: `more than one field of oneof set: ${set.join(", ")}` })
  }
}

const checkMessage = (root: Root, type: Type, v: unknown, path: string, out: Array<Problem>): void => {
  if (!isObject(v)) {
    out.push({ path, message: `${type.fullName.slice(1)} expects an object, got ${kindOf(v)}` })
    return
  }
  if (type.fullName === ANY) {
    checkAny(root, v, path, out)
    return
  }
  checkFields(root, type, v, path, out)
  if (type.fullName === DURATION || type.fullName === TIMESTAMP)
    durationProblems(v, path, out, type.fullName === TIMESTAMP)
}

/**
 * Every shape problem of `value` as the message `type` (a full name such as
 * `envoy.config.cluster.v3.Cluster`, or a type URL); an unknown type is itself the problem.
 */
export const protoShapeProblems = (root: Root, type: string, value: unknown): ReadonlyArray<Problem> => {
  const message = anyType(root, type)
  if (message === undefined) return [{ path: "", message: `unknown message type ${type}` }]
  const out: Array<Problem> = []
  checkMessage(root, message, value, "", out)
  return out
}
