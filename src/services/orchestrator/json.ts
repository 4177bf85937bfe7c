/**
 * Small helpers for orchestrator objects held as plain JSON: the injector reads pods it did not
 * write, so every access tolerates missing or mistyped fields instead of trusting a shape.
 */

export type Obj = Record<string, unknown>

export const isObject = (value: unknown): value is Obj =>
  typeof value === "object" && value !== null && !Array.isArray(value)

export const asObject = (value: unknown): Obj => (isObject(value) ? value : {})

export const asArray = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

export const asObjects = (value: unknown): ReadonlyArray<Obj> => asArray(value).filter(isObject)

/** A string map (labels, annotations): non-string values are dropped. */
export const asStringMap = (value: unknown): Readonly<Record<string, string>> => {
  const out: Record<string, string> = {}
  for (const [key, v] of Object.entries(asObject(value))) if (typeof v === "string") out[key] = v
  return out
}

export const stringAt = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

/** A deep copy of JSON data (the input pod is never changed). */
export const cloneJson = <A>(value: A): A => (value === undefined ? value : (JSON.parse(JSON.stringify(value)) as A))

export const deepEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    return a.every((item, i) => deepEqual(item, b[i]))
  }
  if (!isObject(a) || !isObject(b)) return false
  const keysA = Object.keys(a).filter((k) => a[k] !== undefined)
  const keysB = Object.keys(b).filter((k) => b[k] !== undefined)
  return keysA.length === keysB.length && keysA.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]))
}

/** Values deep-merged: objects key by key, anything else (lists included) replaced by `over`. */
export const deepMerge = (base: unknown, over: unknown): unknown => {
  if (!isObject(base) || !isObject(over)) return over === undefined ? base : over
  const out: Obj = { ...base }
  for (const [key, value] of Object.entries(over)) out[key] = deepMerge(base[key], value)
  return out
}

/** The value at a dotted path of plain objects (`global.proxy.image`), undefined when absent. */
export const valueAt = (root: unknown, path: string): unknown => {
  let current: unknown = root
  for (const part of path.split(".")) {
    if (!isObject(current)) return undefined
    current = current[part]
  }
  return current
}
