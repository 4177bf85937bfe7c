/**
 * `--set key=value` overrides of the operator resource. A key is a dotted path into the spec
 * (`values.global.hub`, `components.cni.enabled`; a leading `spec.` is allowed); a dot inside a
 * key segment is escaped with a backslash (`values.global.meshID\.x`), a list element is
 * addressed by index (`components.ingressGateways[0].enabled`). Values are typed as the
 * reference does: `true`/`false` are booleans, numbers are numbers, anything else a string.
 */
import { Either } from "effect"
import { isObject, type Obj } from "../orchestrator/json.js"

export type PathSegment = string | number

export interface SetFlag {
  readonly flag: string
  readonly path: ReadonlyArray<PathSegment>
  readonly value: unknown
}

/** Splits a key on dots not preceded by a backslash; the backslashes go. */
const splitKey = (key: string): Array<string> => {
  const parts: Array<string> = []
  let current = ""
  for (let i = 0; i < key.length; i++) {
    const ch = key[i]
    if (ch === "\\" && key[i + 1] === ".") {
      current += "."
      i++
    } else if (ch === ".") {
      parts.push(current)
      current = ""
    } else current += ch
  }
  parts.push(current)
  return parts
}

const SEGMENT = /^([^[\]]*)((?:\[\d+\])*)$/

/** A key as a path: `a.b[0].c` → ["a", "b", 0, "c"]. */
export const parseSetKey = (key: string): Either.Either<ReadonlyArray<PathSegment>, string> => {
  const path: Array<PathSegment> = []
  for (const part of splitKey(key)) {
    const match = SEGMENT.exec(part)
    if (match === null || match[1] === "")
      return Either.left(`invalid --set key ${JSON.stringify(key)}: bad segment ${JSON.stringify(part)}`)
    path.push(match[1] as string)
    for (const index of (match[2] ?? "").matchAll(/\[(\d+)\]/g)) path.push(Number(index[1]))
  }
  if (path[0] === "spec") path.shift()
  if (path.length === 0) return Either.left(`invalid --set key ${JSON.stringify(key)}`)
  return Either.right(path)
}

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?$/

/** A flag's value typed: booleans and numbers as such, the rest as the string given. */
export const typedValue = (text: string): unknown =>
  text === "true" ? true : text === "false" ? false : NUMBER.test(text) ? Number(text) : text

/** Parses `key=value`. */
export const parseSetFlag = (flag: string): Either.Either<SetFlag, string> => {
  const eq = flag.indexOf("=")
  if (eq <= 0) return Either.left(`invalid --set ${JSON.stringify(flag)}: expected key=value`)
  return Either.map(parseSetKey(flag.slice(0, eq)), (path) => ({ flag, path, value: typedValue(flag.slice(eq + 1)) }))
}

export const formatPath = (path: ReadonlyArray<PathSegment>): string =>
  path.map((s, i) => (typeof s === "number" ? `[${s}]` : i === 0 ? s : `.${s}`)).join("")

/**
 * Sets `value` at the flag's path of `tree` (a copy is returned), creating mappings on the way.
 * A list index may name an existing element or the next one; a path through a value of another
 * type is an error naming the field.
 */
export const applySetFlag = (tree: Obj, set: SetFlag): Either.Either<Obj, string> => {
  const root: Obj = structuredClone(tree)
  let node: unknown = root
  for (let i = 0; i < set.path.length; i++) {
    const segment = set.path[i] as PathSegment
    const last = i === set.path.length - 1
    const next = set.path[i + 1]
    const fresh = () => (typeof next === "number" ? [] : {})
    const where = formatPath(set.path.slice(0, i + 1))
    if (typeof segment === "number") {
      if (!Array.isArray(node))
        return Either.left(`--set ${set.flag}: ${formatPath(set.path.slice(0, i))} is not a list`)
      if (segment > node.length) {
        return Either.left(
          `--set ${set.flag}: index ${segment} out of range for ${formatPath(set.path.slice(0, i))} (length ${node.length})`,
        )
      }
      if (last) node[segment] = set.value
      else {
        if (node[segment] === undefined || node[segment] === null) node[segment] = fresh()
        node = node[segment]
      }
    } else {
      if (!isObject(node)) return Either.left(`--set ${set.flag}: ${formatPath(set.path.slice(0, i))} is not a mapping`)
      if (last) node[segment] = set.value
      else {
        if (node[segment] === undefined || node[segment] === null) node[segment] = fresh()
        const child = node[segment]
        if (typeof next === "number" ? !Array.isArray(child) : !isObject(child)) {
          return Either.left(`--set ${set.flag}: ${where} is not a ${typeof next === "number" ? "list" : "mapping"}`)
        }
        node = child
      }
    }
  }
  return Either.right(root)
}
