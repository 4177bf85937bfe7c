/**
 * What the conformance checks share: a problem with its path, and the few questions they ask of
 * protobufjs reflection (which type an Any names, whether a value is set, what a scalar is).
 * The checks only read a `Root`; loading it (files, include dirs) is the caller's business.
 */
import type { Enum, Field, MapField, OneOf, Root, Type } from "protobufjs"

/** One reason the data-plane proxy would refuse a resource: where (`a.b[0].c`) and what. */
export interface Problem {
  readonly path: string
  readonly message: string
}

export const formatProblem = (p: Problem): string => `${p.path === "" ? "(root)" : p.path}: ${p.message}`

/** A JSON-ish object (not an array, not a byte buffer). */
export type Obj = Readonly<Record<string, unknown>>

export const isObject = (v: unknown): v is Obj =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array)

/** protobufjs (and so the codec) treats null like absent. */
export const isSet = (v: unknown): boolean => v !== undefined && v !== null

export const child = (path: string, name: string): string => (path === "" ? name : `${path}.${name}`)
export const index = (path: string, i: number): string => `${path}[${i}]`
export const key = (path: string, k: string): string => `${path}[${JSON.stringify(k)}]`

export const ANY = ".google.protobuf.Any"

/** The message an Any's type URL names (the part after the last `/`, as Envoy reads it). */
export const anyType = (root: Root, typeUrl: string): Type | undefined => {
  const name = typeUrl.slice(typeUrl.lastIndexOf("/") + 1)
  if (name === "") return undefined
  try {
    const found = root.lookup(name.startsWith(".") ? name : `.${name}`)
    return found !== null && "fields" in found && "oneofs" in found ? (found as Type) : undefined
  } catch {
    return undefined
  }
}

export const fieldsOf = (type: Type): ReadonlyArray<Field> => type.fieldsArray

export const isMapField = (f: Field): f is Field & MapField => (f as { map?: boolean }).map === true

/** The resolved message type of a field, if it is a message field. */
export const messageTypeOf = (f: Field): Type | undefined => {
  const t = f.resolvedType
  return t !== null && "fields" in t ? (t as Type) : undefined
}

export const enumTypeOf = (f: Field): Enum | undefined => {
  const t = f.resolvedType
  return t !== null && "values" in t && !("fields" in t) ? (t as Enum) : undefined
}

/** The numeric value of an enum value given by name or number; undefined when not defined. */
export const enumNumber = (e: Enum, v: unknown): number | undefined => {
  if (typeof v === "string") return Object.hasOwn(e.values, v) ? e.values[v] : undefined
  if (typeof v === "number" && Number.isInteger(v)) return v
  return undefined
}

export const isDefinedEnumNumber = (e: Enum, n: number): boolean => Object.values(e.values).includes(n)

/**
 * A proto3 `optional` field lives in a synthetic oneof (`_name`); it and real oneof members have
 * presence, so an unset one is not checked against its rules.
 */
export const oneofOf = (f: Field): OneOf | undefined => f.partOf ?? undefined

export const hasPresence = (f: Field): boolean =>
  f.partOf !== null && f.partOf !== undefined ? true : messageTypeOf(f) !== undefined

export const INT64: ReadonlySet<string> = new Set(["int64", "uint64", "sint64", "fixed64", "sfixed64"])
export const INT32: ReadonlySet<string> = new Set(["int32", "sint32", "sfixed32"])
export const UINT32: ReadonlySet<string> = new Set(["uint32", "fixed32"])
export const FLOAT: ReadonlySet<string> = new Set(["double", "float"])
