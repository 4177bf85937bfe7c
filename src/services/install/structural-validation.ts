/**
 * What the orchestrator API server checks when a custom resource is written against a CRD's
 * structural schema, so that the install CRDs can be tested without an API server:
 *
 * 1. non-nullable `null` object fields without a default are pruned (they count as absent);
 * 2. fields the schema does not name are refused (`fieldValidation=Strict`) unless a node keeps
 *    them with `x-kubernetes-preserve-unknown-fields`;
 * 3. the value is checked: `type`, `nullable`, `x-kubernetes-int-or-string`, `enum`, `pattern`,
 *    `format` (the formats listed in `ENFORCED_FORMATS`), `minimum`/`maximum` (with the OpenAPI
 *    v3.0 boolean `exclusive*` flags), `multipleOf`, `minLength`/`maxLength` (in code points),
 *    `minItems`/`maxItems`, `minProperties`/`maxProperties`, `required`, list-type `set`/`map`
 *    uniqueness, and the value validations `allOf`/`anyOf`/`oneOf`/`not`.
 *
 * `structuralProblems` refuses a schema the API server would not accept as structural (a node
 * without a type, `uniqueItems`, `$ref`, types or extensions inside value validations, fields in
 * value validations the structural part does not declare, patterns RE2 cannot compile).
 */
export type StructuralNode = Readonly<Record<string, unknown>>

export interface StructuralIssue {
  /** JSON path from the checked root (`.spec.hosts[0]`). */
  readonly path: string
  readonly message: string
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)

const preserves = (schema: StructuralNode): boolean => schema["x-kubernetes-preserve-unknown-fields"] === true
const intOrString = (schema: StructuralNode): boolean => schema["x-kubernetes-int-or-string"] === true

// ---------------------------------------------------------------------------------------------
// Regular expressions: RE2 (Go) syntax, checked in JavaScript

/** RE2 constructs JavaScript reads differently or not at all are refused; look-around and back-references RE2 refuses. */
const RE2_REFUSED = /\(\?[=!]|\(\?<[=!]|\\[1-9]|\\k</
const JS_ONLY_OR_DIFFERENT = /\\[pP]\{|\(\?[a-zA-Z]|\\[AzQE]|\[\[:/

/** Why a `pattern` is not one both RE2 and this validator read the same way, if it is not. */
export const patternProblem = (pattern: string): string | undefined => {
  if (RE2_REFUSED.test(pattern)) return "look-around and back-references are not RE2 syntax"
  if (JS_ONLY_OR_DIFFERENT.test(pattern))
    return "flags, \\A \\z \\Q, POSIX classes and \\p{} are not in the checked subset"
  try {
    new RegExp(pattern, "u")
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : String(error)
  }
}

const compiled = new Map<string, RegExp>()
const regexOf = (pattern: string): RegExp => {
  let re = compiled.get(pattern)
  if (re === undefined) {
    re = new RegExp(pattern, "u")
    compiled.set(pattern, re)
  }
  return re
}

// ---------------------------------------------------------------------------------------------
// Formats the API server enforces (the rest of its list is not emitted by the generator)

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/
const isIPv6 = (value: string): boolean => {
  if (!/^[0-9a-fA-F:.]+$/.test(value) || value.length < 2) return false
  let text = value
  const tail = text.slice(text.lastIndexOf(":") + 1)
  if (tail.includes(".")) {
    if (!IPV4.test(tail)) return false
    text = `${text.slice(0, text.lastIndexOf(":") + 1)}0:0`
  }
  const halves = text.split("::")
  if (halves.length > 2) return false
  const groups = halves.flatMap((h) => (h === "" ? [] : h.split(":")))
  if (!groups.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return false
  return halves.length === 2 ? groups.length < 8 : groups.length === 8
}

export const ENFORCED_FORMATS: Readonly<Record<string, (value: string) => boolean>> = {
  ipv4: (v) => IPV4.test(v),
  ipv6: isIPv6,
  cidr: (v) => {
    const slash = v.indexOf("/")
    if (slash < 0) return false
    const ip = v.slice(0, slash)
    const bits = v.slice(slash + 1)
    const max = IPV4.test(ip) ? 32 : isIPv6(ip) ? 128 : -1
    return max > 0 && /^\d{1,3}$/.test(bits) && Number(bits) <= max
  },
  uuid: (v) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(v),
  byte: (v) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(v),
  "date-time": (v) => /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(v),
  date: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v),
}

// ---------------------------------------------------------------------------------------------
// Pruning (step 1) and unknown fields (step 2)

const childSchema = (schema: StructuralNode, key: string): StructuralNode | undefined => {
  const props = schema.properties
  if (isObject(props) && isObject(props[key])) return props[key] as StructuralNode
  return isObject(schema.additionalProperties) ? (schema.additionalProperties as StructuralNode) : undefined
}

/** Removes non-nullable, non-defaulted `null` fields of objects, as the API server does before validating. */
export const pruneNonNullableNulls = (schema: StructuralNode, value: unknown): unknown => {
  if (Array.isArray(value)) {
    const items = isObject(schema.items) ? (schema.items as StructuralNode) : undefined
    return items === undefined ? value : value.map((item) => pruneNonNullableNulls(items, item))
  }
  if (!isObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(value)) {
    const child = childSchema(schema, key)
    if (field === null && child !== undefined && child.nullable !== true && child.default === undefined) continue
    out[key] = child === undefined ? field : pruneNonNullableNulls(child, field)
  }
  return out
}

const unknownFields = (schema: StructuralNode, value: unknown, path: string, out: Array<StructuralIssue>): void => {
  if (Array.isArray(value)) {
    if (isObject(schema.items))
      value.forEach((item, i) => {
        unknownFields(schema.items as StructuralNode, item, `${path}[${i}]`, out)
      })
    return
  }
  if (!isObject(value)) return
  for (const [key, field] of Object.entries(value)) {
    const child = childSchema(schema, key)
    if (child !== undefined) unknownFields(child, field, `${path}.${key}`, out)
    else if (!preserves(schema)) out.push({ path: `${path}.${key}`, message: `unknown field "${key}"` })
  }
}

// ---------------------------------------------------------------------------------------------
// Value validation (step 3)

const typeOk = (type: unknown, value: unknown): boolean => {
  switch (type) {
    case "object":
      return isObject(value)
    case "array":
      return Array.isArray(value)
    case "string":
      return typeof value === "string"
    case "integer":
      return typeof value === "number" && Number.isInteger(value)
    case "number":
      return typeof value === "number" && Number.isFinite(value)
    case "boolean":
      return typeof value === "boolean"
    default:
      return false
  }
}

const deepEqual = (a: unknown, b: unknown): boolean => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b))
const canonical = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(canonical)
    : isObject(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, canonical(v[k])]),
        )
      : v

const numberIssues = (schema: StructuralNode, value: number, path: string, out: Array<StructuralIssue>) => {
  const { minimum, maximum, multipleOf } = schema
  if (typeof minimum === "number") {
    const exclusive = schema.exclusiveMinimum === true
    if (exclusive ? value <= minimum : value < minimum)
      out.push({ path, message: `should be greater than ${exclusive ? "" : "or equal to "}${minimum}` })
  }
  if (typeof maximum === "number") {
    const exclusive = schema.exclusiveMaximum === true
    if (exclusive ? value >= maximum : value > maximum)
      out.push({ path, message: `should be less than ${exclusive ? "" : "or equal to "}${maximum}` })
  }
  if (typeof multipleOf === "number" && multipleOf > 0 && !Number.isInteger(value / multipleOf))
    out.push({ path, message: `should be a multiple of ${multipleOf}` })
  if (schema.format === "int32" && (value < -2147483648 || value > 2147483647))
    out.push({ path, message: "must be an int32" })
}

const stringIssues = (schema: StructuralNode, value: string, path: string, out: Array<StructuralIssue>) => {
  const length = [...value].length
  if (typeof schema.minLength === "number" && length < schema.minLength)
    out.push({ path, message: `should be at least ${schema.minLength} chars long` })
  if (typeof schema.maxLength === "number" && length > schema.maxLength)
    out.push({ path, message: `may not be more than ${schema.maxLength} bytes` })
  if (typeof schema.pattern === "string" && !regexOf(schema.pattern).test(value))
    out.push({ path, message: `should match '${schema.pattern}'` })
  const format = typeof schema.format === "string" ? ENFORCED_FORMATS[schema.format] : undefined
  if (format !== undefined && !format(value)) out.push({ path, message: `must be of format ${String(schema.format)}` })
}

const arrayIssues = (
  schema: StructuralNode,
  value: ReadonlyArray<unknown>,
  path: string,
  out: Array<StructuralIssue>,
) => {
  if (typeof schema.minItems === "number" && value.length < schema.minItems)
    out.push({ path, message: `should have at least ${schema.minItems} items` })
  if (typeof schema.maxItems === "number" && value.length > schema.maxItems)
    out.push({ path, message: `must have at most ${schema.maxItems} items` })
  const listType = schema["x-kubernetes-list-type"]
  const keys = schema["x-kubernetes-list-map-keys"]
  if (listType === "set" || (listType === "map" && Array.isArray(keys))) {
    const keyOf = (item: unknown) =>
      listType === "set"
        ? JSON.stringify(canonical(item))
        : JSON.stringify((keys as Array<string>).map((k) => (isObject(item) ? (item[k] ?? null) : null)))
    const seen = new Set<string>()
    value.forEach((item, i) => {
      const key = keyOf(item)
      if (seen.has(key)) out.push({ path: `${path}[${i}]`, message: `Duplicate value: ${key}` })
      seen.add(key)
    })
  }
  if (isObject(schema.items))
    value.forEach((item, i) => {
      checkValue(schema.items as StructuralNode, item, `${path}[${i}]`, out)
    })
}

const objectIssues = (
  schema: StructuralNode,
  value: Record<string, unknown>,
  path: string,
  out: Array<StructuralIssue>,
) => {
  const count = Object.keys(value).length
  if (typeof schema.minProperties === "number" && count < schema.minProperties)
    out.push({ path, message: `should have at least ${schema.minProperties} properties` })
  if (typeof schema.maxProperties === "number" && count > schema.maxProperties)
    out.push({ path, message: `should have at most ${schema.maxProperties} properties` })
  for (const key of Array.isArray(schema.required) ? (schema.required as Array<string>) : [])
    if (!(key in value)) out.push({ path: `${path}.${key}`, message: "Required value" })
  for (const [key, field] of Object.entries(value)) {
    const props = schema.properties
    const child = isObject(props) && isObject(props[key]) ? (props[key] as StructuralNode) : undefined
    const additional = isObject(schema.additionalProperties)
      ? (schema.additionalProperties as StructuralNode)
      : undefined
    const target = child ?? additional
    if (target !== undefined) checkValue(target, field, `${path}.${key}`, out)
  }
}

const valueValidationIssues = (schema: StructuralNode, value: unknown, path: string, out: Array<StructuralIssue>) => {
  const passes = (sub: unknown) => {
    const issues: Array<StructuralIssue> = []
    checkValue(sub as StructuralNode, value, path, issues)
    return issues
  }
  if (Array.isArray(schema.allOf)) for (const sub of schema.allOf) out.push(...passes(sub))
  if (Array.isArray(schema.anyOf)) {
    const results = schema.anyOf.map(passes)
    if (!results.some((r) => r.length === 0))
      out.push({ path, message: `must validate at least one schema (anyOf): ${results.flat()[0]?.message ?? ""}` })
  }
  if (Array.isArray(schema.oneOf)) {
    const matching = schema.oneOf.map(passes).filter((r) => r.length === 0).length
    if (matching !== 1)
      out.push({ path, message: `must validate one and only one schema (oneOf), ${matching} matched` })
  }
  if (isObject(schema.not) && passes(schema.not).length === 0)
    out.push({ path, message: "must not validate the schema (not)" })
}

const checkValue = (schema: StructuralNode, value: unknown, path: string, out: Array<StructuralIssue>): void => {
  if (value === null) {
    // A nullable node (or an untyped one that keeps anything) takes null; a typed one does not.
    if (schema.nullable !== true && (schema.type !== undefined || intOrString(schema)))
      out.push({ path, message: `Invalid value: "null": must be ${String(schema.type ?? "integer or string")}` })
    return
  }
  if (intOrString(schema)) {
    if (!(typeof value === "string" || (typeof value === "number" && Number.isInteger(value)))) {
      out.push({ path, message: "must be an integer or a string" })
      return
    }
  } else if (schema.type !== undefined && !typeOk(schema.type, value)) {
    out.push({ path, message: `Invalid value: must be of type ${String(schema.type)}` })
    return
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => deepEqual(e, value)))
    out.push({
      path,
      message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${JSON.stringify(schema.enum)}`,
    })
  if (typeof value === "number") numberIssues(schema, value, path, out)
  else if (typeof value === "string") stringIssues(schema, value, path, out)
  else if (Array.isArray(value)) arrayIssues(schema, value, path, out)
  else if (isObject(value)) objectIssues(schema, value, path, out)
  valueValidationIssues(schema, value, path, out)
}

export interface StructuralVerdict {
  /** The value after pruning non-nullable nulls (what would be stored). */
  readonly value: unknown
  readonly issues: ReadonlyArray<StructuralIssue>
}

/** The API server's verdict on `value` (strict field validation), issues at paths below `root`. */
export const validateStructural = (schema: StructuralNode, value: unknown, root = ""): StructuralVerdict => {
  const pruned = pruneNonNullableNulls(schema, value)
  const issues: Array<StructuralIssue> = []
  unknownFields(schema, pruned, root, issues)
  checkValue(schema, pruned, root, issues)
  return { value: pruned, issues }
}

// ---------------------------------------------------------------------------------------------
// Is the schema structural?

const TYPES = new Set(["object", "array", "string", "integer", "number", "boolean"])
const VALUE_VALIDATIONS = ["allOf", "anyOf", "oneOf", "not"] as const
/** Keys a value validation (inside allOf/anyOf/oneOf/not) must not carry. */
const FORBIDDEN_IN_VALUE_VALIDATION = ["type", "additionalProperties", "description", "default", "nullable", "title"]

const valueValidationProblems = (node: unknown, outer: StructuralNode, path: string, out: Array<string>): void => {
  if (!isObject(node)) return
  for (const key of Object.keys(node)) {
    if (FORBIDDEN_IN_VALUE_VALIDATION.includes(key) || key.startsWith("x-kubernetes-"))
      out.push(`${path}.${key}: must not be set in a value validation`)
  }
  if (node.uniqueItems === true) out.push(`${path}.uniqueItems: must not be true`)
  if (typeof node.pattern === "string") {
    const problem = patternProblem(node.pattern)
    if (problem !== undefined) out.push(`${path}.pattern: ${problem}`)
  }
  if (isObject(node.properties)) {
    const declared = isObject(outer.properties) ? outer.properties : {}
    for (const [key, sub] of Object.entries(node.properties)) {
      const structural = declared[key]
      if (!isObject(structural)) out.push(`${path}.properties.${key}: not declared in the structural schema`)
      else valueValidationProblems(sub, structural, `${path}.properties.${key}`, out)
    }
  }
  if (isObject(node.items)) {
    if (!isObject(outer.items)) out.push(`${path}.items: not declared in the structural schema`)
    else valueValidationProblems(node.items, outer.items, `${path}.items`, out)
  }
  for (const key of VALUE_VALIDATIONS) {
    const subs = key === "not" ? [node.not] : Array.isArray(node[key]) ? (node[key] as Array<unknown>) : []
    subs.forEach((sub, i) => {
      valueValidationProblems(sub, outer, `${path}.${key}[${i}]`, out)
    })
  }
}

/** Why the API server would not take `schema` as a structural schema (empty when it would). */
export const structuralProblems = (schema: unknown, path = ""): ReadonlyArray<string> => {
  const out: Array<string> = []
  const walk = (node: unknown, at: string): void => {
    if (!isObject(node)) {
      out.push(`${at}: not a schema`)
      return
    }
    if ("$ref" in node || "definitions" in node || "$defs" in node) out.push(`${at}: references are not allowed`)
    if (node.uniqueItems === true) out.push(`${at}.uniqueItems: must not be true`)
    const type = node.type
    if (intOrString(node)) {
      if (type !== undefined) out.push(`${at}.type: must be empty with x-kubernetes-int-or-string`)
    } else if (type === undefined) {
      if (!preserves(node)) out.push(`${at}.type: must not be empty`)
    } else if (typeof type !== "string" || !TYPES.has(type)) out.push(`${at}.type: unknown type ${String(type)}`)
    if (node.properties !== undefined && node.additionalProperties !== undefined)
      out.push(`${at}: properties and additionalProperties are mutually exclusive`)
    if ((node.properties !== undefined || node.additionalProperties !== undefined) && type !== "object")
      out.push(`${at}: properties need type object`)
    if (type === "array" && !isObject(node.items)) out.push(`${at}.items: must be set for an array`)
    if (node["x-kubernetes-list-type"] === "map") {
      // A list-map's keys are fields of its object items, each required (or defaulted).
      const items = isObject(node.items) ? node.items : {}
      const keys = Array.isArray(node["x-kubernetes-list-map-keys"])
        ? (node["x-kubernetes-list-map-keys"] as Array<string>)
        : []
      if (keys.length === 0) out.push(`${at}.x-kubernetes-list-map-keys: must name the keys of a list-type map`)
      const required = Array.isArray(items.required) ? (items.required as Array<unknown>) : []
      const props = isObject(items.properties) ? items.properties : {}
      for (const key of keys) {
        const field = props[key]
        if (!isObject(field)) out.push(`${at}.x-kubernetes-list-map-keys: ${key} is not a field of the items`)
        else if (!required.includes(key) && field.default === undefined)
          out.push(`${at}.x-kubernetes-list-map-keys: ${key} must be required or have a default`)
      }
    }
    if (typeof node.pattern === "string") {
      const problem = patternProblem(node.pattern)
      if (problem !== undefined) out.push(`${at}.pattern: ${problem}`)
    }
    if (typeof node.format === "string" && !(node.format in ENFORCED_FORMATS) && node.format !== "int32")
      out.push(`${at}.format: ${node.format} is not a format this validator enforces`)
    for (const key of VALUE_VALIDATIONS) {
      const subs = key === "not" ? (node.not === undefined ? [] : [node.not]) : ((node[key] as Array<unknown>) ?? [])
      subs.forEach((sub, i) => {
        valueValidationProblems(sub, node, `${at}.${key}[${i}]`, out)
      })
    }
    if (isObject(node.properties))
      for (const [key, sub] of Object.entries(node.properties)) walk(sub, `${at}.properties.${key}`)
    if (isObject(node.additionalProperties)) walk(node.additionalProperties, `${at}.additionalProperties`)
    if (node.items !== undefined) walk(node.items, `${at}.items`)
  }
  walk(schema, path)
  return out
}
