/**
 * A strategic merge of a partial pod over a pod, as the reference applies each rendered
 * injection template: maps merge key by key, `null` removes a key, lists of the pod API's
 * mergeable kinds merge element by element on their merge key (containers, init containers,
 * volumes and pull secrets by name, env by name, mounts by mount path, ports by container
 * port, host aliases by IP) and every other list is replaced. The directives a template may
 * write: `$patch: delete` on a list element removes the matching one, `$patch: replace` on a
 * map or list element replaces instead of merging; other `$`-keys are dropped.
 */
import { isObject, type Obj } from "../orchestrator/json.js"

/** The pod API's patch merge keys, by field name (the fields of these names use them wherever they appear). */
const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: "name",
  initContainers: "name",
  ephemeralContainers: "name",
  volumes: "name",
  imagePullSecrets: "name",
  env: "name",
  volumeMounts: "mountPath",
  volumeDevices: "devicePath",
  ports: "containerPort",
  hostAliases: "ip",
  resourceClaims: "name",
  ownerReferences: "uid",
}

const directive = (v: unknown): unknown => (isObject(v) ? v.$patch : undefined)

const withoutDirectives = (o: Obj): Obj => Object.fromEntries(Object.entries(o).filter(([k]) => !k.startsWith("$")))

const mergeList = (base: unknown, patch: ReadonlyArray<unknown>, key: string): Array<unknown> => {
  if (patch.some((p) => directive(p) === "replace")) {
    return patch.filter((p) => directive(p) !== "replace").map((p) => (isObject(p) ? withoutDirectives(p) : p))
  }
  const out: Array<unknown> = Array.isArray(base) ? [...base] : []
  for (const item of patch) {
    if (!isObject(item) || item[key] === undefined) {
      out.push(item)
      continue
    }
    const at = out.findIndex((b) => isObject(b) && b[key] === item[key])
    if (directive(item) === "delete") {
      if (at >= 0) out.splice(at, 1)
    } else if (at >= 0) out[at] = mergeValue(out[at], item)
    else out.push(mergeValue(undefined, item))
  }
  return out
}

const mergeValue = (base: unknown, patch: unknown): unknown => {
  // A replaced list's elements are new: cleaned of nulls and directives like any new map.
  if (Array.isArray(patch)) return patch.filter((e) => directive(e) !== "delete").map((e) => mergeValue(undefined, e))
  if (!isObject(patch)) return patch
  if (directive(patch) === "replace" || !isObject(base)) {
    // Nulls in a new map mean nothing to remove: leave them out.
    const fresh: Obj = {}
    for (const [k, v] of Object.entries(withoutDirectives(patch))) if (v !== null) fresh[k] = mergeValue(undefined, v)
    return fresh
  }
  const out: Obj = { ...base }
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith("$")) continue
    if (v === null) {
      delete out[k]
      continue
    }
    const key = MERGE_KEYS[k]
    out[k] = key !== undefined && Array.isArray(v) ? mergeList(base[k], v, key) : mergeValue(base[k], v)
  }
  return out
}

/** The pod with the partial pod merged over it (neither is changed). */
export const strategicMerge = (pod: Obj, patch: Obj): Obj => mergeValue(pod, patch) as Obj
