/**
 * JSON Schema (as Effect's `JSONSchema.make` writes it) → the structural OpenAPI v3 subset an
 * orchestrator CRD accepts: references inlined, `anyOf [X, null]` turned into a nullable X,
 * unions of one type merged, unions of strings and numbers marked int-or-string, other unions
 * and free-form values kept with `x-kubernetes-preserve-unknown-fields`. Kept: `type`,
 * `properties`, `additionalProperties` (maps), `items`, `enum`, `required`, `minimum`/`maximum`,
 * `minItems`/`maxItems`, `minLength`/`maxLength`, and `pattern` when the regular expression is
 * one the API server's RE2 engine understands (no look-around, no back-references). A schema
 * may add keywords for its CRD under `STRUCTURAL_KEYWORDS` (bounds and value validations its
 * filters enforce); they are merged into the node as they are.
 */
import { STRUCTURAL_KEYWORDS } from "../config-model/schemas/common.js"

export type JsonSchema = Record<string, unknown>

export type Structural = Record<string, unknown>

const PRESERVE: Structural = { "x-kubernetes-preserve-unknown-fields": true }
const INT_OR_STRING: Structural = { "x-kubernetes-int-or-string": true }

const isSchema = (v: unknown): v is JsonSchema => typeof v === "object" && v !== null && !Array.isArray(v)

const resolveRef = (node: JsonSchema, defs: JsonSchema): JsonSchema => {
  let current = node
  for (let depth = 0; typeof current.$ref === "string" && depth < 32; depth++) {
    const name = decodeURIComponent(current.$ref.replace(/^#\/\$defs\//, "").replace(/^#\/definitions\//, ""))
    const target = defs[name]
    if (!isSchema(target)) return {}
    const { $ref: _ref, ...rest } = current
    current = { ...target, ...rest }
  }
  return current
}

const RE2_UNSUPPORTED = /\(\?[=!<]|\\[1-9]/

const typeOfConst = (value: unknown): string | undefined =>
  typeof value === "string"
    ? "string"
    : typeof value === "boolean"
      ? "boolean"
      : typeof value === "number"
        ? "number"
        : undefined

/** The single `type` a node stands for, if any (after inlining). */
const singleType = (node: Structural): string | undefined =>
  typeof node.type === "string" && node["x-kubernetes-preserve-unknown-fields"] !== true ? node.type : undefined

const mergeUnion = (members: ReadonlyArray<Structural>): Structural => {
  const types = new Set(members.map(singleType))
  if (types.size === 1 && !types.has(undefined)) {
    const type = [...types][0] as string
    if (members.every((m) => Array.isArray(m.enum))) {
      return { type, enum: [...new Set(members.flatMap((m) => m.enum as Array<unknown>))] }
    }
    if (type === "object") {
      // Alternatives of an object (oneOf-style messages): every field any of them allows.
      const properties: Record<string, Structural> = {}
      for (const m of members) Object.assign(properties, (m.properties as Record<string, Structural>) ?? {})
      return Object.keys(properties).length > 0 ? { type, properties } : { type, ...PRESERVE }
    }
    return members.find((m) => m.enum === undefined && m.pattern === undefined) ?? { type }
  }
  if ([...types].every((t) => t === "string" || t === "number" || t === "integer")) return INT_OR_STRING
  return PRESERVE
}

/**
 * Keywords a config-model schema declares for its CRD (`structuralKeywords`): bounds and value
 * validations its filters enforce that JSON Schema output cannot show. They are merged last.
 */
export const toStructural = (node: unknown, defs: JsonSchema = {}): Structural => {
  const converted = convert(node, defs)
  const extra = isSchema(node) ? resolveRef(node, defs)[STRUCTURAL_KEYWORDS] : undefined
  return isSchema(extra) ? { ...converted, ...extra } : converted
}

const convert = (node: unknown, defs: JsonSchema): Structural => {
  if (!isSchema(node)) return PRESERVE
  const schema = resolveRef(node, defs)
  const description = typeof schema.description === "string" ? { description: schema.description } : {}

  const union = (schema.anyOf ?? schema.oneOf) as ReadonlyArray<unknown> | undefined
  if (Array.isArray(union)) {
    const members = union.filter((m) => !(isSchema(m) && resolveRef(m, defs).type === "null"))
    const nullable = members.length < union.length ? { nullable: true } : {}
    const converted = members.map((m) => toStructural(m, defs))
    const merged = converted.length === 1 ? (converted[0] as Structural) : mergeUnion(converted)
    return { ...merged, ...description, ...nullable }
  }
  if (Array.isArray(schema.allOf)) {
    const parts = (schema.allOf as ReadonlyArray<unknown>).map((m) => toStructural(m, defs))
    const { allOf: _allOf, ...rest } = schema
    return Object.assign({}, ...parts, toStructural(rest, defs))
  }
  if ("const" in schema) {
    const type = typeOfConst(schema.const)
    return type === undefined ? PRESERVE : { type, enum: [schema.const], ...description }
  }
  if (Array.isArray(schema.enum)) {
    const types = new Set(schema.enum.map(typeOfConst))
    if (types.size !== 1 || types.has(undefined)) return { ...PRESERVE, ...description }
    return { type: [...types][0], enum: schema.enum, ...description }
  }
  const type = schema.type
  if (type === "string") {
    const pattern =
      typeof schema.pattern === "string" && !RE2_UNSUPPORTED.test(schema.pattern) ? { pattern: schema.pattern } : {}
    return { type, ...pick(schema, ["minLength", "maxLength"]), ...pattern, ...description }
  }
  if (type === "number" || type === "integer") {
    return { type, ...pick(schema, ["minimum", "maximum"]), ...exclusive(schema), ...description }
  }
  if (type === "boolean") return { type, ...description }
  if (type === "array") {
    const items = Array.isArray(schema.items) ? PRESERVE : toStructural(schema.items ?? {}, defs)
    return { type, items, ...pick(schema, ["minItems", "maxItems"]), ...description }
  }
  if (type === "object") {
    const properties = isSchema(schema.properties) ? schema.properties : {}
    const required = Array.isArray(schema.required) && schema.required.length > 0 ? { required: schema.required } : {}
    const additional = schema.additionalProperties ?? firstPatternProperty(schema)
    if (Object.keys(properties).length > 0) {
      const props: Record<string, Structural> = {}
      const requiredKeys = new Set(Array.isArray(schema.required) ? schema.required : [])
      for (const [key, value] of Object.entries(properties)) {
        // An optional field that may be null: the API server prunes a null it may not hold, so it
        // counts as absent, as the config model reads it; only a required one keeps `nullable`.
        const { nullable: _nullable, ...field } = toStructural(value, defs)
        props[key] = requiredKeys.has(key) && _nullable === true ? { ...field, nullable: true } : field
      }
      // Typed fields and a free-form remainder at once: the remainder's fields are kept unchecked.
      const rest = additional !== undefined && additional !== false ? PRESERVE : {}
      return { type, properties: props, ...required, ...rest, ...description }
    }
    if (isSchema(additional) && Object.keys(additional).length > 0) {
      return { type, additionalProperties: toStructural(additional, defs), ...description }
    }
    return { type, ...PRESERVE, ...description }
  }
  return { ...PRESERVE, ...description }
}

const pick = (schema: JsonSchema, keys: ReadonlyArray<string>): Structural => {
  const out: Structural = {}
  for (const key of keys) if (typeof schema[key] === "number") out[key] = schema[key]
  return out
}

/** Draft-07 exclusive bounds are numbers; OpenAPI v3 writes a bound plus a flag. */
const exclusive = (schema: JsonSchema): Structural => {
  const out: Structural = {}
  if (typeof schema.exclusiveMinimum === "number")
    Object.assign(out, { minimum: schema.exclusiveMinimum, exclusiveMinimum: true })
  if (typeof schema.exclusiveMaximum === "number")
    Object.assign(out, { maximum: schema.exclusiveMaximum, exclusiveMaximum: true })
  return out
}

const firstPatternProperty = (schema: JsonSchema): unknown =>
  isSchema(schema.patternProperties) ? Object.values(schema.patternProperties)[0] : undefined
