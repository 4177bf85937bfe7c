/**
 * EnvoyFilter patch values are written as proto JSON (the reference's YAML): lowerCamelCase field
 * names, `"@type"` Any values, durations as `"1.5s"`, Struct/Value as plain JSON, wrappers as bare
 * values. The generators' resources are proto objects as the codec takes them: proto field names
 * (snake_case), Any values inline under `"@type"`, durations as `{seconds, nanos}`, Struct as
 * `{fields: {k: Value}}`. This converts the first into the second, guided by the message types;
 * without a known type it falls back to a camelCase → snake_case rename of the keys.
 *
 * Nothing here throws: a field the type does not have, or a value of the wrong shape, is dropped
 * and reported (`problems`), naming its path; the caller prefixes the EnvoyFilter and patch.
 */
import {
  camelToSnake,
  type FieldType,
  fieldOf,
  fullNameOf,
  isEnumType,
  isMessageType,
  type MessageType,
  messageTypeOfUrl,
} from "./proto-types.js"

export type Problems = Array<string>

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array)

const WRAPPERS = new Set([
  "google.protobuf.DoubleValue",
  "google.protobuf.FloatValue",
  "google.protobuf.Int64Value",
  "google.protobuf.UInt64Value",
  "google.protobuf.Int32Value",
  "google.protobuf.UInt32Value",
  "google.protobuf.BoolValue",
  "google.protobuf.StringValue",
  "google.protobuf.BytesValue",
])

/** Well-known types whose JSON form is not an object of their fields (inside an Any: `{"@type", "value"}`). */
const SPECIAL_JSON = new Set([
  ...WRAPPERS,
  "google.protobuf.Duration",
  "google.protobuf.Timestamp",
  "google.protobuf.Struct",
  "google.protobuf.Value",
  "google.protobuf.ListValue",
  "google.protobuf.FieldMask",
])

/** `"1.5s"` → `{seconds: "1", nanos: 500000000}`. */
const parseDuration = (text: string): { seconds: string; nanos: number } | undefined => {
  const m = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/.exec(text.trim())
  if (m === null) return undefined
  const sign = m[1] === "-" ? -1 : 1
  const nanos = m[3] === undefined ? 0 : Number(m[3].padEnd(9, "0"))
  return { seconds: String(sign * Number(m[2])), nanos: sign * nanos }
}

const parseTimestamp = (text: string): { seconds: string; nanos: number } | undefined => {
  const ms = Date.parse(text)
  if (Number.isNaN(ms)) return undefined
  const frac = /\.(\d{1,9})/.exec(text)
  const nanos = frac?.[1] === undefined ? 0 : Number(frac[1].padEnd(9, "0"))
  return { seconds: String(Math.floor(ms / 1000)), nanos }
}

/** The names protobufjs gives google.protobuf.Value's members (its bundled types use camelCase). */
const valueField = (t: MessageType, snake: string): string => fieldOf(t, snake)?.name ?? snake

const structFrom = (json: Record<string, unknown>, t: MessageType): Record<string, unknown> => {
  const valueType = fieldOf(t, "fields")?.resolvedType
  const fields: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(json)) fields[k] = isMessageType(valueType) ? valueFrom(v, valueType) : v
  return { fields }
}

const valueFrom = (json: unknown, t: MessageType): Record<string, unknown> => {
  if (json === null || json === undefined) return { [valueField(t, "null_value")]: "NULL_VALUE" }
  if (typeof json === "number") return { [valueField(t, "number_value")]: json }
  if (typeof json === "string") return { [valueField(t, "string_value")]: json }
  if (typeof json === "boolean") return { [valueField(t, "bool_value")]: json }
  if (Array.isArray(json)) return { [valueField(t, "list_value")]: { values: json.map((v) => valueFrom(v, t)) } }
  const structType = fieldOf(t, "struct_value")?.resolvedType
  return {
    [valueField(t, "struct_value")]: isMessageType(structType)
      ? structFrom(json as Record<string, unknown>, structType)
      : { fields: {} },
  }
}

/** Converts a well-known type's JSON form; undefined when `json` is not in that form. */
const wellKnownFrom = (json: unknown, t: MessageType, path: string, problems: Problems): unknown => {
  const name = fullNameOf(t)
  if (WRAPPERS.has(name)) return isPlainObject(json) ? undefined : { value: json }
  switch (name) {
    case "google.protobuf.Duration":
    case "google.protobuf.Timestamp": {
      if (typeof json !== "string") return undefined
      const parsed = name === "google.protobuf.Duration" ? parseDuration(json) : parseTimestamp(json)
      if (parsed === undefined) problems.push(`${path}: "${json}" is not a valid ${name.slice(16)}`)
      return parsed ?? null
    }
    case "google.protobuf.Struct":
      return isPlainObject(json) ? structFrom(json, t) : undefined
    case "google.protobuf.Value":
      return valueFrom(json, t)
    case "google.protobuf.ListValue": {
      if (!Array.isArray(json)) return undefined
      const valueType = fieldOf(t, "values")?.resolvedType
      return { values: json.map((v) => (isMessageType(valueType) ? valueFrom(v, valueType) : v)) }
    }
    case "google.protobuf.FieldMask":
      return typeof json === "string"
        ? {
            paths: json
              .split(",")
              .filter((p) => p !== "")
              .map((p) => p.split(".").map(camelToSnake).join(".")),
          }
        : undefined
    default:
      return undefined
  }
}

/** Fallback without a type: keys renamed camelCase → snake_case, Any values still looked up. */
const untyped = (json: unknown, path: string, problems: Problems): unknown => {
  if (Array.isArray(json)) return json.map((v, i) => untyped(v, `${path}[${i}]`, problems))
  if (!isPlainObject(json)) return json
  if (typeof json["@type"] === "string") return anyFrom(json, path, problems)
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(json)) out[camelToSnake(k)] = untyped(v, `${path}.${k}`, problems)
  return out
}

/** An Any in JSON (`{"@type": url, ...fields}`) → the inline proto object form. */
const anyFrom = (json: Record<string, unknown>, path: string, problems: Problems): unknown => {
  const typeUrl = json["@type"]
  if (typeof typeUrl !== "string") {
    // `{type_url, value}` (already encoded) or empty: passed on as the generic form.
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(json)) out[camelToSnake(k)] = v
    return out
  }
  const { "@type": _drop, ...rest } = json
  const t = messageTypeOfUrl(typeUrl)
  if (t === undefined) {
    problems.push(`${path}: type ${typeUrl} is not a known proto; its field names are converted without checking`)
    const converted = untyped(rest, path, problems) as Record<string, unknown>
    return { "@type": typeUrl, ...converted }
  }
  if (SPECIAL_JSON.has(fullNameOf(t))) {
    const inner = messageFrom(rest.value, t, `${path}.value`, problems)
    return isPlainObject(inner) ? { "@type": typeUrl, ...inner } : { "@type": typeUrl }
  }
  const fields = messageFrom(rest, t, path, problems)
  return isPlainObject(fields) ? { "@type": typeUrl, ...fields } : { "@type": typeUrl }
}

/** What each proto scalar type holds (also the generated xDS types' field types, scripts/gen-xds-types.ts). */
export const SCALAR_KINDS: Readonly<Record<string, "number" | "string" | "boolean" | "bytes" | "long">> = {
  double: "number",
  float: "number",
  int32: "number",
  uint32: "number",
  sint32: "number",
  fixed32: "number",
  sfixed32: "number",
  int64: "long",
  uint64: "long",
  sint64: "long",
  fixed64: "long",
  sfixed64: "long",
  bool: "boolean",
  string: "string",
  bytes: "bytes",
}

/** One (non-repeated) value of field `f`; `undefined` drops it (after a problem is recorded). */
const singleFrom = (json: unknown, f: FieldType, path: string, problems: Problems): unknown => {
  const resolvedType = f.resolvedType
  if (isMessageType(resolvedType)) return messageFrom(json, resolvedType, path, problems)
  if (isEnumType(resolvedType)) {
    if (typeof json === "string" || typeof json === "number") return json
    problems.push(`${path}: expected an enum name, got ${JSON.stringify(json)}`)
    return undefined
  }
  const kind = SCALAR_KINDS[f.type]
  const ok =
    kind === "number"
      ? typeof json === "number" || (typeof json === "string" && json.trim() !== "" && !Number.isNaN(Number(json)))
      : kind === "long"
        ? typeof json === "number" || typeof json === "string"
        : kind === "boolean"
          ? typeof json === "boolean"
          : kind === "string" || kind === "bytes"
            ? typeof json === "string"
            : true
  if (!ok) {
    problems.push(`${path}: expected a ${kind}, got ${JSON.stringify(json)}`)
    return undefined
  }
  // proto JSON allows numbers as strings ("NaN", "1e3"); the codec wants numbers.
  return kind === "number" && typeof json === "string" ? Number(json) : json
}

/**
 * A message's JSON → its proto object. Unknown fields are dropped with a problem naming them;
 * JSON `null` means "unset" and is dropped silently (except for google.protobuf.Value).
 */
export const messageFrom = (json: unknown, t: MessageType, path: string, problems: Problems): unknown => {
  const name = fullNameOf(t)
  if (name === "google.protobuf.Any") {
    if (!isPlainObject(json)) {
      problems.push(`${path}: expected an object with "@type"`)
      return undefined
    }
    return anyFrom(json, path, problems)
  }
  if (name.startsWith("google.protobuf.")) {
    const special = wellKnownFrom(json, t, path, problems)
    if (special === null) return undefined
    if (special !== undefined) return special
  }
  if (!isPlainObject(json)) {
    problems.push(`${path}: expected an object for ${name}, got ${JSON.stringify(json)}`)
    return undefined
  }
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(json)) {
    const f = fieldOf(t, key)
    const fieldPath = `${path}.${key}`
    if (f === undefined) {
      problems.push(`${fieldPath}: no field "${key}" in ${name}; dropped`)
      continue
    }
    const isValue = isMessageType(f.resolvedType) && fullNameOf(f.resolvedType) === "google.protobuf.Value"
    if (value === null && !isValue) continue
    if (f.map) {
      if (!isPlainObject(value)) {
        problems.push(`${fieldPath}: expected a map (object)`)
        continue
      }
      const entries: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(value)) {
        const converted = singleFrom(v, f, `${fieldPath}.${k}`, problems)
        if (converted !== undefined) entries[k] = converted
      }
      out[f.name] = entries
    } else if (f.repeated) {
      if (!Array.isArray(value)) {
        problems.push(`${fieldPath}: expected a list`)
        continue
      }
      out[f.name] = value.map((v, i) => singleFrom(v, f, `${fieldPath}[${i}]`, problems)).filter((v) => v !== undefined)
    } else {
      const converted = singleFrom(value, f, fieldPath, problems)
      if (converted !== undefined) out[f.name] = converted
    }
  }
  return out
}

/** Converts a patch value to the proto object form; `t` undefined: keys renamed only. */
export const protoFromJson = (json: unknown, t: MessageType | undefined, path: string, problems: Problems): unknown =>
  t === undefined ? untyped(json, path, problems) : messageFrom(json, t, path, problems)
