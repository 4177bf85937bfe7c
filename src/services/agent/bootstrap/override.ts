/**
 * `MESH_BOOTSTRAP_OVERRIDE`: a JSON or YAML file deep-merged over the generated proxy bootstrap.
 * Objects merge key by key (recursively); lists and scalars in the override replace the
 * generated value whole (the reference merges the bootstrap protos, which appends repeated
 * fields; replacing lets an override drop or reorder entries, and one written for the reference
 * that repeats the generated entries stays correct). Pure: the caller reads the file.
 */
import { Either } from "effect"
import { parseDocument } from "yaml"

export type JsonObject = { readonly [key: string]: unknown }

const isRecord = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** `override` over `base`: objects merge, everything else replaces. */
export const deepMerge = (base: unknown, override: unknown): unknown => {
  if (!isRecord(base) || !isRecord(override)) return override
  const out: Record<string, unknown> = { ...base }
  for (const [key, value] of Object.entries(override)) {
    out[key] = Object.hasOwn(base, key) ? deepMerge(base[key], value) : value
  }
  return out
}

/** Parses an override file's text (JSON is YAML); it must be one mapping. */
export const parseOverride = (file: string, text: string): Either.Either<JsonObject, string> => {
  const doc = parseDocument(text, { uniqueKeys: true })
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!
    const line = e.linePos?.[0]?.line
    const reason = (e.message.split("\n")[0] ?? e.message).replace(/ at line \d+, column \d+:?$/, "")
    return Either.left(
      `MESH_BOOTSTRAP_OVERRIDE ${file}: syntax error${line !== undefined ? ` at line ${line}` : ""}: ${reason}`,
    )
  }
  const value: unknown = doc.toJS({ maxAliasCount: 1000 })
  if (!isRecord(value)) {
    return Either.left(`MESH_BOOTSTRAP_OVERRIDE ${file}: must hold one JSON/YAML object (mapping)`)
  }
  return Either.right(value)
}
