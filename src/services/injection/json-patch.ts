/**
 * An RFC 6902 JSON Patch from the original pod to the injected one (what the admission webhook
 * answers). Keys are escaped (`~` → `~0`, `/` → `~1`). Lists are patched so that the patch
 * applies to the original object: a list the original lacks is added whole; elements appended
 * at the end use `/-`; lists of named entries (containers, init containers, volumes, env) whose
 * original entries all remain in order get their new entries inserted by index and their kept
 * entries patched in place; anything else is replaced whole.
 */

import { deepEqual, isObject } from "../orchestrator/json.js"
import type { Json } from "./contract.js"

export interface JsonPatchOperation {
  readonly op: "add" | "remove" | "replace"
  readonly path: string
  readonly value?: unknown
}

export const escapePointerToken = (token: string): string => token.replaceAll("~", "~0").replaceAll("/", "~1")

const named = (list: ReadonlyArray<unknown>): list is ReadonlyArray<Record<string, unknown> & { name: string }> =>
  list.every((item) => isObject(item) && typeof item.name === "string") &&
  new Set(list.map((item) => (item as { name: string }).name)).size === list.length

const diffArray = (
  from: ReadonlyArray<unknown>,
  to: ReadonlyArray<unknown>,
  path: string,
  ops: Array<JsonPatchOperation>,
): void => {
  if (to.length >= from.length && from.every((item, i) => deepEqual(item, to[i]))) {
    for (const item of to.slice(from.length)) ops.push({ op: "add", path: `${path}/-`, value: item })
    return
  }
  if (named(from) && named(to)) {
    const toNames = to.map((item) => item.name)
    const positions = from.map((item) => toNames.indexOf(item.name))
    const kept = positions.every((p, i) => p >= 0 && (i === 0 || p > (positions[i - 1] ?? -1)))
    if (kept) {
      // Walking the target in order, the working list always equals its prefix before index i.
      const byName = new Map(from.map((item) => [item.name, item]))
      to.forEach((item, i) => {
        const original = byName.get(item.name)
        if (original === undefined) ops.push({ op: "add", path: `${path}/${i}`, value: item })
        else diffValue(original, item, `${path}/${i}`, ops)
      })
      return
    }
  }
  if (from.length === to.length) {
    for (const [i, item] of from.entries()) diffValue(item, to[i], `${path}/${i}`, ops)
    return
  }
  ops.push({ op: "replace", path, value: to })
}

const diffValue = (from: unknown, to: unknown, path: string, ops: Array<JsonPatchOperation>): void => {
  if (deepEqual(from, to)) return
  if (isObject(from) && isObject(to)) {
    for (const key of Object.keys(from)) {
      if (from[key] !== undefined && to[key] === undefined)
        ops.push({ op: "remove", path: `${path}/${escapePointerToken(key)}` })
    }
    for (const [key, value] of Object.entries(to)) {
      if (value === undefined) continue
      const child = `${path}/${escapePointerToken(key)}`
      if (from[key] === undefined) ops.push({ op: "add", path: child, value })
      else diffValue(from[key], value, child, ops)
    }
    return
  }
  if (Array.isArray(from) && Array.isArray(to)) {
    diffArray(from, to, path, ops)
    return
  }
  ops.push({ op: "replace", path, value: to })
}

/** The operations turning `original` into `injected`; empty when they are equal. */
export const jsonPatch = (original: Json, injected: Json): ReadonlyArray<JsonPatchOperation> => {
  const ops: Array<JsonPatchOperation> = []
  diffValue(original, injected, "", ops)
  return ops
}
