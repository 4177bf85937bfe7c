/**
 * The three patch formats of the orchestrator API: JSON merge patch (RFC 7386), JSON patch
 * (RFC 6902) and strategic merge patch, whose lists merge by key for the built-in fields
 * `kubectl apply` touches, with the `$patch`, `$retainKeys`, `$setElementOrder/` and
 * `$deleteFromPrimitiveList/` directives.
 */
import { ApiError, failure } from "./status.js"

type Json = null | boolean | number | string | Array<Json> | { [key: string]: Json }
type JsonObject = { [key: string]: Json }

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v)
const clone = <A>(v: A): A => structuredClone(v)
const patchError = (message: string) => new ApiError(failure(422, "Invalid", message))

export const mergePatch = (target: unknown, patch: unknown): Json => {
  if (!isObject(patch)) return clone(patch as Json)
  const out: JsonObject = isObject(target) ? clone(target) : {}
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key]
    else out[key] = mergePatch(out[key], value)
  }
  return out
}

// ---- JSON patch ----

interface Operation {
  readonly op: string
  readonly path: string
  readonly from?: string
  readonly value?: Json
}

const pointer = (path: string): Array<string> => {
  if (path === "") return []
  if (!path.startsWith("/")) throw patchError(`invalid JSON pointer: ${path}`)
  return path
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
}

const parentOf = (doc: Json, tokens: Array<string>, path: string): [Json, string] => {
  let at: Json = doc
  for (const token of tokens.slice(0, -1)) {
    const next: Json | undefined = Array.isArray(at) ? at[Number(token)] : isObject(at) ? at[token] : undefined
    if (next === undefined) throw patchError(`jsonpatch: path ${path} does not exist`)
    at = next
  }
  return [at, tokens[tokens.length - 1]!]
}

const valueAt = (doc: Json, path: string): Json => {
  const tokens = pointer(path)
  if (tokens.length === 0) return doc
  const [parent, last] = parentOf(doc, tokens, path)
  const v = Array.isArray(parent) ? parent[Number(last)] : isObject(parent) ? parent[last] : undefined
  if (v === undefined) throw patchError(`jsonpatch: path ${path} does not exist`)
  return v
}

const removeAt = (doc: Json, path: string): Json => {
  const [parent, last] = parentOf(doc, pointer(path), path)
  if (Array.isArray(parent)) {
    const index = Number(last)
    if (!(index >= 0 && index < parent.length))
      throw patchError(`jsonpatch remove operation does not apply: index ${last} out of range`)
    return parent.splice(index, 1)[0]!
  }
  if (!isObject(parent) || !(last in parent))
    throw patchError(`jsonpatch remove operation does not apply: doc is missing key: ${path}`)
  const v = parent[last]!
  delete parent[last]
  return v
}

const addAt = (doc: Json, path: string, value: Json, replace: boolean): Json => {
  const tokens = pointer(path)
  if (tokens.length === 0) return value
  const [parent, last] = parentOf(doc, tokens, path)
  if (Array.isArray(parent)) {
    const index = last === "-" ? parent.length : Number(last)
    if (!(index >= 0 && index <= parent.length - (replace ? 1 : 0)))
      throw patchError(`jsonpatch: index ${last} out of range`)
    parent.splice(index, replace ? 1 : 0, value)
  } else if (isObject(parent)) {
    if (replace && !(last in parent))
      throw patchError(`jsonpatch replace operation does not apply: doc is missing key: ${path}`)
    parent[last] = value
  } else throw patchError(`jsonpatch: path ${path} does not exist`)
  return doc
}

export const jsonPatch = (target: unknown, operations: unknown): Json => {
  if (!Array.isArray(operations)) throw patchError("json patch must be an array of operations")
  let doc = clone(target as Json)
  for (const op of operations as Array<Operation>) {
    switch (op.op) {
      case "add":
        doc = addAt(doc, op.path, clone(op.value ?? null), false)
        break
      case "replace":
        doc = addAt(doc, op.path, clone(op.value ?? null), true)
        break
      case "remove":
        removeAt(doc, op.path)
        break
      case "move":
        doc = addAt(doc, op.path, removeAt(doc, op.from ?? ""), false)
        break
      case "copy":
        doc = addAt(doc, op.path, clone(valueAt(doc, op.from ?? "")), false)
        break
      case "test":
        if (JSON.stringify(valueAt(doc, op.path)) !== JSON.stringify(op.value ?? null))
          throw patchError(`testing value ${op.path} failed`)
        break
      default:
        throw patchError(`Unexpected kind: ${op.op}`)
    }
  }
  return doc
}

// ---- strategic merge patch ----

/** How a list at `path` (field names, no indices) merges: by a key, as a set, or replaced. */
type ListStrategy = { readonly key: string } | "set" | "replace"

const containerLists = new Set(["containers", "initContainers", "ephemeralContainers"])
const byFieldName: Readonly<Record<string, string>> = {
  env: "name",
  volumeMounts: "mountPath",
  volumeDevices: "devicePath",
  imagePullSecrets: "name",
  hostAliases: "ip",
  topologySpreadConstraints: "topologyKey",
  conditions: "type",
  ownerReferences: "uid",
  webhooks: "name",
  taints: "key",
  addresses: "type",
  podIPs: "ip",
  readinessGates: "conditionType",
  resourceClaims: "name",
}

const listStrategy = (kind: string, path: ReadonlyArray<string>): ListStrategy => {
  const field = path[path.length - 1]!
  const parent = path[path.length - 2]
  if (containerLists.has(field)) return { key: "name" }
  if (field === "ports" && parent !== undefined && containerLists.has(parent)) return { key: "containerPort" }
  if (field === "ports" && kind === "Service" && path.length === 2) return { key: "port" }
  if (field === "volumes" && parent === "spec") return { key: "name" }
  if (field === "finalizers" && parent === "metadata") return "set"
  const key = byFieldName[field]
  return key === undefined ? "replace" : { key }
}

const SET_ORDER = "$setElementOrder/"
const DELETE_PRIMITIVE = "$deleteFromPrimitiveList/"

const mergeList = (kind: string, path: Array<string>, original: Json | undefined, patch: Array<Json>): Json => {
  const strategy = listStrategy(kind, path)
  const base = Array.isArray(original) ? clone(original) : []
  if (strategy === "replace") return patch.filter((item) => !(isObject(item) && "$patch" in item))
  if (strategy === "set")
    return [...base, ...patch.filter((item) => !base.some((b) => JSON.stringify(b) === JSON.stringify(item)))]
  if (patch.some((item) => isObject(item) && item.$patch === "replace"))
    return patch.filter((item) => !(isObject(item) && item.$patch === "replace"))
  const keyOf = (item: Json) => (isObject(item) ? JSON.stringify(item[strategy.key] ?? null) : JSON.stringify(item))
  let out = base
  for (const item of patch) {
    const index = out.findIndex((o) => keyOf(o) === keyOf(item))
    if (isObject(item) && item.$patch === "delete") {
      out = out.filter((o) => keyOf(o) !== keyOf(item))
    } else if (index >= 0) {
      out[index] = strategicMergePatch(out[index], item, kind, path)
    } else {
      out.push(strategicMergePatch(undefined, item, kind, path))
    }
  }
  return out
}

const reorder = (list: Json | undefined, order: Array<Json>, key: string | undefined): Json | undefined => {
  if (!Array.isArray(list)) return list
  const id = (item: Json) => JSON.stringify(key !== undefined && isObject(item) ? (item[key] ?? null) : item)
  const rank = new Map(order.map((o, i) => [JSON.stringify(o), i]))
  const listed = list.filter((item) => rank.has(id(item))).sort((a, b) => rank.get(id(a))! - rank.get(id(b))!)
  return [...listed, ...list.filter((item) => !rank.has(id(item)))]
}

/** `kind` picks the merge keys (Service ports merge by `port`, container ports by `containerPort`). */
export const strategicMergePatch = (
  original: unknown,
  patch: unknown,
  kind: string,
  path: Array<string> = [],
): Json => {
  if (!isObject(patch)) return clone(patch as Json)
  if (patch.$patch === "replace") {
    const { $patch: _, ...rest } = patch
    return clone(rest)
  }
  const out: JsonObject = isObject(original) ? clone(original) : {}
  const orders: Array<[string, Array<Json>]> = []
  for (const [key, value] of Object.entries(patch)) {
    if (key === "$patch" || key === "$retainKeys") continue
    if (key.startsWith(SET_ORDER)) {
      orders.push([key.slice(SET_ORDER.length), Array.isArray(value) ? value : []])
      continue
    }
    if (key.startsWith(DELETE_PRIMITIVE)) {
      const field = key.slice(DELETE_PRIMITIVE.length)
      const drop = new Set((Array.isArray(value) ? value : []).map((v) => JSON.stringify(v)))
      const list = out[field]
      if (Array.isArray(list)) out[field] = list.filter((v) => !drop.has(JSON.stringify(v)))
      continue
    }
    const at = [...path, key]
    if (value === null) delete out[key]
    else if (Array.isArray(value)) out[key] = mergeList(kind, at, out[key], value)
    else if (isObject(value) && value.$patch === "delete") delete out[key]
    else if (isObject(value)) out[key] = strategicMergePatch(out[key], value, kind, at)
    else out[key] = value
  }
  for (const [field, order] of orders) {
    const strategy = listStrategy(kind, [...path, field])
    const reordered = reorder(out[field], order, typeof strategy === "object" ? strategy.key : undefined)
    if (reordered !== undefined) out[field] = reordered
  }
  if (Array.isArray(patch.$retainKeys)) {
    const keep = new Set(patch.$retainKeys)
    for (const key of Object.keys(out)) if (!keep.has(key)) delete out[key]
  }
  return out
}
