/**
 * A validator for the structural-schema subset the install CRDs emit (type, properties,
 * additionalProperties, items, enum, required, minimum/maximum, pattern, nullable,
 * int-or-string, preserve-unknown-fields), standing in for the API server's check of a custom
 * resource. Unknown fields are reported, as the API server does under strict field validation.
 */
type Node = Record<string, unknown>

const typeOk = (type: string, value: unknown): boolean => {
  switch (type) {
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value)
    case "array":
      return Array.isArray(value)
    case "string":
      return typeof value === "string"
    case "integer":
      return typeof value === "number" && Number.isInteger(value)
    case "number":
      return typeof value === "number"
    case "boolean":
      return typeof value === "boolean"
    default:
      return false
  }
}

export const validateStructural = (schema: Node, value: unknown, path = ""): Array<string> => {
  if (value === null)
    return schema.nullable === true || schema["x-kubernetes-preserve-unknown-fields"] === true
      ? []
      : [`${path}: must not be null`]
  if (schema["x-kubernetes-int-or-string"] === true) {
    return typeof value === "string" || typeof value === "number" ? [] : [`${path}: must be an integer or a string`]
  }
  const type = schema.type as string | undefined
  if (type === undefined)
    return schema["x-kubernetes-preserve-unknown-fields"] === true ? [] : [`${path}: schema has no type`]
  if (!typeOk(type, value)) return [`${path}: must be of type ${type}`]
  const errors: Array<string> = []
  if (Array.isArray(schema.enum) && !schema.enum.includes(value))
    errors.push(`${path}: must be one of ${JSON.stringify(schema.enum)}`)
  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum)
      errors.push(`${path}: below minimum ${schema.minimum}`)
    if (typeof schema.maximum === "number" && value > schema.maximum)
      errors.push(`${path}: above maximum ${schema.maximum}`)
  }
  if (typeof value === "string" && typeof schema.pattern === "string" && !new RegExp(schema.pattern, "u").test(value)) {
    errors.push(`${path}: does not match ${schema.pattern}`)
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      errors.push(...validateStructural((schema.items ?? {}) as Node, item, `${path}[${i}]`))
    }
  }
  if (type === "object") {
    const obj = value as Record<string, unknown>
    const props = (schema.properties ?? {}) as Record<string, Node>
    for (const key of (schema.required ?? []) as Array<string>)
      if (!(key in obj)) errors.push(`${path}.${key}: required`)
    for (const [key, v] of Object.entries(obj)) {
      const child = props[key] ?? (schema.additionalProperties as Node | undefined)
      if (child !== undefined) errors.push(...validateStructural(child, v, `${path}.${key}`))
      else if (schema["x-kubernetes-preserve-unknown-fields"] !== true) errors.push(`${path}.${key}: unknown field`)
    }
  }
  return errors
}
