/**
 * Laying one operator tree over another, as `-f` files are applied left to right: mappings
 * merge key by key, anything else (lists included) is replaced by the overlay's value. Inputs
 * are never changed.
 */
import { isObject, type Obj } from "../orchestrator/json.js"

const mergeValue = (base: unknown, overlay: unknown): unknown =>
  isObject(base) && isObject(overlay) ? deepMerge(base, overlay) : structuredClone(overlay)

export const deepMerge = (base: Obj, overlay: Obj): Obj => {
  const out: Obj = structuredClone(base)
  for (const [key, value] of Object.entries(overlay)) {
    if (value === undefined) continue
    out[key] = mergeValue(out[key], value)
  }
  return out
}
