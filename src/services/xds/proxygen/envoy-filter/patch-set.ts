/**
 * The patches that apply to one proxy, grouped by `applyTo` in patch order (filters in
 * `envoyFiltersForProxy` order, then `configPatches` order), and the helpers every level's
 * patcher shares: inserting into a filter list, the reference's filter MERGE, and a guard that
 * turns a failing patch into a warning.
 */
import type { ConfigResource } from "../../../config-model/resource.js"
import type { EnvoyFilterSpec } from "../../../config-model/schemas/envoy-filter.js"
import type { ProtoObject } from "../../cache/resource-spec.js"
import type { GeneratorNotice } from "../../grpcgen/generator-notices.js"
import type { ProxyView } from "../proxy-view.js"
import { obj, proxyMatch, str } from "./match.js"
import { type ApplyTo, type CompiledPatch, compileEnvoyFilter, type EnvoyFilterMemo, VALUE_TYPES } from "./patches.js"
import { clone, mergeMessage } from "./proto-merge.js"
import { type MessageType, messageType } from "./proto-types.js"

export interface PatchSet {
  readonly proxy: ProxyView
  readonly byApplyTo: ReadonlyMap<ApplyTo, ReadonlyArray<CompiledPatch>>
  readonly warnings: Array<GeneratorNotice>
}

export const patchesOf = (set: PatchSet, applyTo: ApplyTo): ReadonlyArray<CompiledPatch> =>
  set.byApplyTo.get(applyTo) ?? []

export const collectPatches = (
  filters: ReadonlyArray<ConfigResource<EnvoyFilterSpec>>,
  proxy: ProxyView,
  memo?: EnvoyFilterMemo,
): PatchSet => {
  const warnings: Array<GeneratorNotice> = []
  const byApplyTo = new Map<ApplyTo, Array<CompiledPatch>>()
  for (const filter of filters) {
    const compiled = compileEnvoyFilter(filter, memo)
    warnings.push(...compiled.warnings)
    for (const patch of compiled.patches) {
      if (!proxyMatch(proxy, patch)) continue
      const list = byApplyTo.get(patch.applyTo) ?? []
      list.push(patch)
      byApplyTo.set(patch.applyTo, list)
    }
  }
  return { proxy, byApplyTo, warnings }
}

export const warn = (set: PatchSet, message: string): void => {
  set.warnings.push({ level: "warning", scope: "model", message })
}

/** Runs one patch's change; a throw (malformed value) keeps `fallback` and becomes a warning. */
export const guard = <T>(set: PatchSet, patch: CompiledPatch, fallback: T, change: () => T): T => {
  try {
    return change()
  } catch (e) {
    warn(set, `${patch.where}: could not apply (${String(e)}); patch skipped`)
    return fallback
  }
}

/** The message type of an applyTo's objects (for proto-aware merges). */
export const typeOf = (applyTo: ApplyTo): MessageType | undefined => {
  const name = VALUE_TYPES[applyTo]
  return name === undefined ? undefined : messageType(name)
}

/** A copy of the patch value, so that later patches never change the compiled one. */
export const patchValue = (patch: CompiledPatch): ProtoObject => clone(patch.value ?? {})

/**
 * ADD / INSERT_FIRST / INSERT_BEFORE / INSERT_AFTER / REPLACE on a filter list, as the reference:
 * without a filter named in the match, INSERT_BEFORE is INSERT_FIRST and INSERT_AFTER is ADD;
 * with one that is not in the list, nothing is inserted; REPLACE needs a named filter.
 */
export const insertIntoList = (
  list: ReadonlyArray<ProtoObject>,
  patch: CompiledPatch,
  named: boolean,
  matches: (item: ProtoObject) => boolean,
): ReadonlyArray<ProtoObject> => {
  const value = patchValue(patch)
  switch (patch.operation) {
    case "ADD":
      return [...list, value]
    case "INSERT_FIRST":
      return [value, ...list]
    case "INSERT_AFTER":
    case "INSERT_BEFORE": {
      if (!named) return patch.operation === "INSERT_AFTER" ? [...list, value] : [value, ...list]
      const at = list.findIndex(matches)
      if (at < 0) return list
      const position = patch.operation === "INSERT_AFTER" ? at + 1 : at
      return [...list.slice(0, position), value, ...list.slice(position)]
    }
    case "REPLACE": {
      if (!named) return list
      const at = list.findIndex(matches)
      if (at < 0) return list
      return [...list.slice(0, at), value, ...list.slice(at + 1)]
    }
    default:
      return list
  }
}

/**
 * The reference's MERGE of a network, HTTP or listener filter: the patch may rename the filter,
 * and its typed config merges into the filter's field by field, the patch's `@type` taken as the
 * filter's (the reference swaps it, assuming compatible versions). A filter without a typed
 * config is left alone.
 */
export const mergeFilter = (filter: ProtoObject, patch: CompiledPatch): ProtoObject => {
  const typed = obj(filter.typed_config)
  if (typed === undefined) return filter
  const value = patchValue(patch)
  const name = str(value.name) !== "" ? str(value.name) : filter.name
  const patchTyped = obj(value.typed_config)
  if (patchTyped === undefined) return { ...filter, name }
  const retagged = typed["@type"] === undefined ? patchTyped : { ...patchTyped, "@type": typed["@type"] }
  const merged = mergeMessage({ typed_config: typed }, { typed_config: retagged }, typeOf("NETWORK_FILTER"))
  return { ...filter, name, typed_config: merged.typed_config }
}

/** Drops, with a warning, added top-level resources whose name is taken (the proxy would reject both). */
export const addUnique = (
  set: PatchSet,
  resources: Array<ProtoObject>,
  added: ProtoObject,
  patch: CompiledPatch,
  what: string,
): void => {
  const name = str(added.name)
  if (name !== "" && resources.some((r) => str(r.name) === name)) {
    warn(set, `${patch.where}: ${what} "${name}" already exists; ADD skipped`)
    return
  }
  resources.push(added)
}
