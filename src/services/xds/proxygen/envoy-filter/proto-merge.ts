/**
 * Proto merge (the reference's MERGE operation) on proto objects: for each field set in the patch,
 * a message field merges recursively, a repeated field appends, a map field replaces entry by
 * entry, a scalar replaces (proto3: a scalar left at its default value counts as unset, unless it
 * is a oneof member or `optional`); setting one member of a oneof clears the others. As in the
 * reference, a Duration is replaced whole, and an Any whose `"@type"` equals the patch's merges
 * field by field (another type replaces it). Without a type, objects merge recursively, arrays
 * append and scalars replace.
 *
 * Pure: returns a new object and never mutates its inputs.
 */
import type { ProtoObject } from "../../cache/resource-spec.js"
import {
  type FieldType,
  fieldOf,
  fullNameOf,
  isEnumType,
  isMessageType,
  type MessageType,
  messageTypeOfUrl,
  oneofSiblings,
} from "./proto-types.js"

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array)

export const clone = <T>(value: T): T => structuredClone(value)

const LONGS = new Set(["int64", "uint64", "sint64", "fixed64", "sfixed64"])

/** Whether a proto3 scalar holds its default value (so a merge does not copy it). */
const isDefaultScalar = (f: FieldType, value: unknown): boolean => {
  if (f.partOf !== null && f.partOf !== undefined) return false
  if (isEnumType(f.resolvedType)) {
    if (typeof value === "number") return value === 0
    return typeof value === "string" && f.resolvedType.values[value] === 0
  }
  if (value === 0 || value === "" || value === false) return true
  // 64-bit integers travel as strings.
  if (value === "0" && LONGS.has(f.type)) return true
  return value instanceof Uint8Array && value.length === 0
}

const mergeUntyped = (dst: unknown, src: unknown): unknown => {
  if (Array.isArray(src)) return Array.isArray(dst) ? [...dst, ...clone(src)] : clone(src)
  if (isPlainObject(src) && isPlainObject(dst)) {
    if (typeof src["@type"] === "string" || typeof dst["@type"] === "string") return mergeAny(dst, src)
    const out: Record<string, unknown> = { ...dst }
    for (const [k, v] of Object.entries(src)) out[k] = k in dst ? mergeUntyped(dst[k], v) : clone(v)
    return out
  }
  return clone(src)
}

/** Any values in inline form: same `"@type"` (or none in the patch) → field merge; else replace. */
const mergeAny = (dst: Record<string, unknown>, src: Record<string, unknown>): Record<string, unknown> => {
  const srcType = src["@type"]
  const dstType = dst["@type"]
  if (typeof dstType !== "string" || (srcType !== undefined && srcType !== dstType)) return clone(src)
  const t = messageTypeOfUrl(dstType)
  const { "@type": _s, ...srcFields } = src
  const { "@type": _d, ...dstFields } = dst
  const merged = t === undefined ? mergeUntyped(dstFields, srcFields) : mergeMessage(dstFields, srcFields, t)
  return { "@type": dstType, ...(merged as Record<string, unknown>) }
}

const mergeField = (dst: unknown, src: unknown, f: FieldType): unknown => {
  const t = f.resolvedType
  if (!isMessageType(t)) return clone(src)
  const name = fullNameOf(t)
  if (name === "google.protobuf.Duration" || !isPlainObject(src) || !isPlainObject(dst)) return clone(src)
  if (name === "google.protobuf.Any") return mergeAny(dst, src)
  return mergeMessage(dst, src, t)
}

/** Merges `src` into `dst` (both proto objects of message type `t`, or untyped). */
export const mergeMessage = (
  dst: ProtoObject,
  src: ProtoObject,
  t: MessageType | undefined,
): Record<string, unknown> => {
  if (t === undefined) return mergeUntyped(dst, src) as Record<string, unknown>
  if (fullNameOf(t) === "google.protobuf.Any") return mergeAny(dst, src)
  const out: Record<string, unknown> = { ...dst }
  for (const [key, value] of Object.entries(src)) {
    if (value === undefined) continue
    const f = fieldOf(t, key)
    if (f === undefined) {
      out[key] = key in dst ? mergeUntyped(dst[key], value) : clone(value)
      continue
    }
    for (const sibling of oneofSiblings(f)) delete out[sibling]
    if (f.map) {
      out[f.name] = { ...(isPlainObject(dst[f.name]) ? (dst[f.name] as object) : {}), ...clone(value as object) }
    } else if (f.repeated) {
      const existing = dst[f.name]
      out[f.name] = Array.isArray(existing) ? [...existing, ...clone(value as ReadonlyArray<unknown>)] : clone(value)
    } else if (isMessageType(f.resolvedType)) {
      out[f.name] = f.name in dst ? mergeField(dst[f.name], value, f) : clone(value)
    } else if (!isDefaultScalar(f, value)) {
      out[f.name] = value
    }
  }
  return out
}
