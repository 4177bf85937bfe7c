/**
 * LISTENER, LISTENER_FILTER, FILTER_CHAIN, NETWORK_FILTER and HTTP_FILTER patches on an LDS
 * response, in the reference's order: per listener its merges/removes/replaces, its listener
 * filters, then per filter chain (and the default chain) its merges/removes, then per chain the
 * network filter inserts followed by per filter merges/removes — and within each HTTP connection
 * manager the same for HTTP filters, and the route patches on an inline route configuration.
 * Filter chain ADDs follow a listener's chains; listener ADDs go last (a sidecar's in the
 * outbound context only, as the reference adds listeners while building the outbound side).
 */
import type { ProtoObject } from "../../cache/resource-spec.js"
import { Filter, TypedConfig, VIRTUAL_INBOUND_LISTENER } from "../well-known.js"
import {
  arr,
  contextMatch,
  filterChainMatch,
  hasHttpFilterMatch,
  hasListenerFilterMatch,
  hasNetworkFilterMatch,
  httpFilterMatch,
  listenerFilterMatch,
  listenerMatch,
  networkFilterMatch,
  obj,
  str,
} from "./match.js"
import {
  addUnique,
  guard,
  insertIntoList,
  mergeFilter,
  type PatchSet,
  patchesOf,
  patchValue,
  typeOf,
} from "./patch-set.js"
import type { CompiledPatch, PatchContext } from "./patches.js"
import { mergeMessage } from "./proto-merge.js"
import { patchRouteConfiguration } from "./routes.js"

const INSERTING = new Set(["ADD", "INSERT_FIRST", "INSERT_BEFORE", "INSERT_AFTER", "REPLACE"])

const objects = (v: unknown): ReadonlyArray<ProtoObject> => arr(v).filter((x): x is ProtoObject => obj(x) !== undefined)

/** The patch context of a listener: gateway, inbound (virtualInbound, INBOUND direction) or outbound. */
export const listenerContext = (set: PatchSet, listener: ProtoObject): PatchContext =>
  set.proxy.kind === "router"
    ? "GATEWAY"
    : str(listener.name) === VIRTUAL_INBOUND_LISTENER || listener.traffic_direction === "INBOUND"
      ? "SIDECAR_INBOUND"
      : "SIDECAR_OUTBOUND"

/**
 * The generic filter-list pass: insert-like operations first (in patch order), then per filter
 * its merges and removes. `extra` post-processes each surviving filter.
 */
const patchFilterList = (
  set: PatchSet,
  patches: ReadonlyArray<CompiledPatch>,
  list: ReadonlyArray<ProtoObject>,
  applies: (p: CompiledPatch) => boolean,
  named: (p: CompiledPatch) => boolean,
  matches: (item: ProtoObject, p: CompiledPatch) => boolean,
  extra: (item: ProtoObject) => ProtoObject = (item) => item,
): ReadonlyArray<ProtoObject> => {
  let filters = list
  for (const p of patches) {
    if (!INSERTING.has(p.operation) || !applies(p)) continue
    filters = insertIntoList(filters, p, named(p), (item) => matches(item, p))
  }
  const out: Array<ProtoObject> = []
  for (const original of filters) {
    let filter: ProtoObject | undefined = original
    for (const p of patches) {
      if (filter === undefined || (p.operation !== "MERGE" && p.operation !== "REMOVE")) continue
      if (!applies(p) || !matches(filter, p)) continue
      const current: ProtoObject = filter
      filter = p.operation === "REMOVE" ? undefined : guard(set, p, current, () => mergeFilter(current, p))
    }
    if (filter !== undefined) out.push(extra(filter))
  }
  return out
}

const isHttpConnectionManager = (filter: ProtoObject): boolean =>
  str(filter.name) === Filter.httpConnectionManager ||
  obj(filter.typed_config)?.["@type"] === TypedConfig.httpConnectionManager

const patchHttpConnectionManager = (
  set: PatchSet,
  context: PatchContext,
  listener: ProtoObject,
  fc: ProtoObject,
  filter: ProtoObject,
): ProtoObject => {
  const hcm = obj(filter.typed_config)
  if (hcm === undefined || !isHttpConnectionManager(filter)) return filter
  let config = hcm
  const httpPatches = patchesOf(set, "HTTP_FILTER")
  if (httpPatches.length > 0) {
    const applies = (p: CompiledPatch) =>
      contextMatch(context, p) &&
      listenerMatch(listener, p) &&
      filterChainMatch(listener, fc, p) &&
      networkFilterMatch(filter, p)
    const httpFilters = patchFilterList(
      set,
      httpPatches,
      objects(config.http_filters),
      applies,
      hasHttpFilterMatch,
      (f, p) => httpFilterMatch(f, p),
    )
    if (config.http_filters !== undefined || httpFilters.length > 0) config = { ...config, http_filters: httpFilters }
  }
  const inline = obj(config.route_config)
  if (inline !== undefined) config = { ...config, route_config: patchRouteConfiguration(set, context, inline) }
  return config === hcm ? filter : { ...filter, typed_config: config }
}

const patchFilterChain = (
  set: PatchSet,
  context: PatchContext,
  listener: ProtoObject,
  original: ProtoObject,
): ProtoObject | undefined => {
  let fc = original
  const fcType = typeOf("FILTER_CHAIN")
  for (const p of patchesOf(set, "FILTER_CHAIN")) {
    if (p.operation !== "MERGE" && p.operation !== "REMOVE") continue
    if (!contextMatch(context, p) || !listenerMatch(listener, p) || !filterChainMatch(listener, fc, p)) continue
    if (p.operation === "REMOVE") return undefined
    const current = fc
    fc = guard(set, p, current, () => mergeMessage(current, patchValue(p), fcType))
  }
  const chain = fc
  const applies = (p: CompiledPatch) =>
    contextMatch(context, p) && listenerMatch(listener, p) && filterChainMatch(listener, chain, p)
  const filters = patchFilterList(
    set,
    patchesOf(set, "NETWORK_FILTER"),
    objects(chain.filters),
    applies,
    hasNetworkFilterMatch,
    (f, p) => networkFilterMatch(f, p),
    (f) => patchHttpConnectionManager(set, context, listener, chain, f),
  )
  return chain.filters === undefined && filters.length === 0 ? chain : { ...chain, filters }
}

const patchListener = (set: PatchSet, original: ProtoObject): ProtoObject | undefined => {
  const context = listenerContext(set, original)
  const listenerType = typeOf("LISTENER")
  let listener = original
  for (const p of patchesOf(set, "LISTENER")) {
    if (p.operation === "ADD" || !contextMatch(context, p) || !listenerMatch(listener, p)) continue
    if (p.operation === "REMOVE") return undefined
    const current = listener
    listener =
      p.operation === "REPLACE"
        ? patchValue(p)
        : guard(set, p, current, () => mergeMessage(current, patchValue(p), listenerType))
  }
  const listenerFilterPatches = patchesOf(set, "LISTENER_FILTER")
  if (listenerFilterPatches.length > 0) {
    const l = listener
    const filters = patchFilterList(
      set,
      listenerFilterPatches,
      objects(l.listener_filters),
      (p) => contextMatch(context, p) && listenerMatch(l, p),
      hasListenerFilterMatch,
      (f, p) => listenerFilterMatch(f, p),
    )
    if (l.listener_filters !== undefined || filters.length > 0) listener = { ...l, listener_filters: filters }
  }
  const chainPatches =
    patchesOf(set, "FILTER_CHAIN").length +
    patchesOf(set, "NETWORK_FILTER").length +
    patchesOf(set, "HTTP_FILTER").length
  const routePatches =
    patchesOf(set, "ROUTE_CONFIGURATION").length +
    patchesOf(set, "VIRTUAL_HOST").length +
    patchesOf(set, "HTTP_ROUTE").length
  if (chainPatches + routePatches === 0) return listener
  const l = listener
  const chains: Array<ProtoObject> = []
  for (const fc of objects(l.filter_chains)) {
    const patched = patchFilterChain(set, context, l, fc)
    if (patched !== undefined) chains.push(patched)
  }
  for (const p of patchesOf(set, "FILTER_CHAIN"))
    if (p.operation === "ADD" && contextMatch(context, p) && listenerMatch(l, p)) chains.push(patchValue(p))
  let out: Record<string, unknown> =
    l.filter_chains === undefined && chains.length === 0 ? { ...l } : { ...l, filter_chains: chains }
  const defaultChain = obj(l.default_filter_chain)
  if (defaultChain !== undefined) {
    const patched = patchFilterChain(set, context, l, defaultChain)
    if (patched === undefined) {
      const { default_filter_chain: _removed, ...rest } = out
      out = rest
    } else out = { ...out, default_filter_chain: patched }
  }
  return out
}

export const patchListeners = (set: PatchSet, listeners: ReadonlyArray<ProtoObject>): ReadonlyArray<ProtoObject> => {
  const out: Array<ProtoObject> = []
  for (const listener of listeners) {
    const patched = patchListener(set, listener)
    if (patched !== undefined) out.push(patched)
  }
  const addContext: PatchContext = set.proxy.kind === "router" ? "GATEWAY" : "SIDECAR_OUTBOUND"
  for (const p of patchesOf(set, "LISTENER"))
    if (p.operation === "ADD" && contextMatch(addContext, p)) addUnique(set, out, patchValue(p), p, "listener")
  return out
}
