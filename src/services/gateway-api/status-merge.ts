/**
 * How the status the conversion wants (convert.ts `statuses`) is merged into the status an
 * object carries, and whether that needs a write at all.
 *
 * - A condition whose `status` did not change keeps the `lastTransitionTime` it carries (the
 *   orchestrator convention: the time says when the status last flipped, not when it was last
 *   written); any other condition takes the new time.
 * - Whether anything changed is decided ignoring `lastTransitionTime`: the conversion stamps
 *   every condition with the clock, so comparing times would make every round a write.
 * - A route's `status.parents` is shared with other controllers: their entries are kept as they
 *   are, ours are replaced by the desired ones (matched by parentRef) and dropped once their
 *   parent is no longer ours to answer for.
 * - A policy's `status.ancestors` is shared the same way (matched by ancestorRef; ours are the
 *   gateway controller's and the mesh controller's), at most 16.
 * - A Gateway's `listeners` and `addresses` are replaced (an address no longer wanted is
 *   removed); a GatewayClass's `conditions` are merged. Fields this controller does not write
 *   are left as they are.
 */
import { deepEqual } from "../config-store/snapshot.js"
import { GATEWAY_API_GROUP, GatewayApiKind } from "./model.js"
import { MESH_CONTROLLER_NAME } from "./policy-targets.js"

type Json = Record<string, unknown>

const asRecord = (value: unknown): Json =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {}

const asArray = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

/** The desired conditions, each keeping the current time when its status is unchanged. */
export const mergeConditions = (desired: unknown, current: unknown): ReadonlyArray<unknown> => {
  const before = asArray(current).map(asRecord)
  return asArray(desired).map((value) => {
    const wanted = asRecord(value)
    const previous = before.find((c) => c.type === wanted.type)
    return previous !== undefined &&
      previous.status === wanted.status &&
      typeof previous.lastTransitionTime === "string"
      ? { ...wanted, lastTransitionTime: previous.lastTransitionTime }
      : value
  })
}

/** The identity of a parentRef, with the API's defaults (group, kind) filled in. */
const parentKey = (ref: unknown): string => {
  const r = asRecord(ref)
  return JSON.stringify([
    r.group ?? GATEWAY_API_GROUP,
    r.kind ?? "Gateway",
    r.namespace ?? "",
    r.name ?? "",
    r.sectionName ?? "",
    r.port ?? 0,
  ])
}

/**
 * Route parents: other controllers' entries where they were, ours replaced in place (or appended
 * when new), ours for parents no longer wanted dropped.
 */
const mergeParents = (desired: unknown, current: unknown, controllerName: string): ReadonlyArray<unknown> => {
  const wanted = new Map(asArray(desired).map((p) => [parentKey(asRecord(p).parentRef), asRecord(p)] as const))
  const placed = new Set<string>()
  const out: Array<unknown> = []
  for (const entry of asArray(current)) {
    const existing = asRecord(entry)
    if (existing.controllerName !== controllerName) {
      out.push(entry)
      continue
    }
    const key = parentKey(existing.parentRef)
    const next = wanted.get(key)
    if (next === undefined || placed.has(key)) continue
    placed.add(key)
    out.push({ ...next, conditions: mergeConditions(next.conditions, existing.conditions) })
  }
  for (const [key, next] of wanted) if (!placed.has(key)) out.push(next)
  return out
}

/** The identity of a policy's ancestorRef: its fields as written (the reference compares them so). */
const ancestorKey = (ref: unknown): string => {
  const r = asRecord(ref)
  return JSON.stringify([r.group, r.kind, r.namespace, r.name, r.sectionName, r.port])
}

/**
 * Policy ancestors: entries of controllers other than ours (the gateway controller and the mesh
 * controller) kept where they were, ours replaced in place or dropped, new ones appended; at
 * most 16 in all.
 */
const mergeAncestors = (desired: unknown, current: unknown, ours: ReadonlySet<string>): ReadonlyArray<unknown> => {
  const wanted = asArray(desired).map(asRecord)
  const placed = new Set<number>()
  const out: Array<unknown> = []
  for (const entry of asArray(current)) {
    const existing = asRecord(entry)
    if (!ours.has(String(existing.controllerName))) {
      out.push(entry)
      continue
    }
    const i = wanted.findIndex(
      (w, j) => !placed.has(j) && ancestorKey(w.ancestorRef) === ancestorKey(existing.ancestorRef),
    )
    if (i === -1) continue
    placed.add(i)
    out.push({ ...wanted[i]!, conditions: mergeConditions(wanted[i]!.conditions, existing.conditions) })
  }
  wanted.forEach((w, j) => {
    if (!placed.has(j)) out.push(w)
  })
  return out.slice(0, 16)
}

const isPolicyKind = (kind: string): boolean =>
  kind === GatewayApiKind.BackendTLSPolicy || kind === GatewayApiKind.XBackendTrafficPolicy

const mergeListeners = (desired: unknown, current: unknown): ReadonlyArray<unknown> => {
  const before = asArray(current).map(asRecord)
  return asArray(desired).map((value) => {
    const wanted = asRecord(value)
    const previous = before.find((l) => l.name === wanted.name)
    return { ...wanted, conditions: mergeConditions(wanted.conditions, previous?.conditions) }
  })
}

const isRouteKind = (kind: string): boolean =>
  kind === GatewayApiKind.HTTPRoute ||
  kind === GatewayApiKind.GRPCRoute ||
  kind === GatewayApiKind.TCPRoute ||
  kind === GatewayApiKind.TLSRoute

/** The status with every `lastTransitionTime` left out, for comparison. */
const withoutTimes = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(withoutTimes)
  if (typeof value !== "object" || value === null) return value
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== "lastTransitionTime")
      .map(([key, v]) => [key, withoutTimes(v)]),
  )
}

const merge = (kind: string, desired: Json, current: Json, controllerName: string): Json => {
  if (isRouteKind(kind)) {
    const parents = mergeParents(desired.parents, current.parents, controllerName)
    // A route nobody has answered for yet gets no empty list written.
    return parents.length === 0 && current.parents === undefined ? current : { ...current, parents }
  }
  if (isPolicyKind(kind)) {
    const ours = new Set([controllerName, MESH_CONTROLLER_NAME])
    return { ...current, ancestors: mergeAncestors(desired.ancestors, current.ancestors, ours) }
  }
  if (kind === GatewayApiKind.KubernetesGateway) {
    const { addresses: _, attachedListenerSets: __, ...rest } = current
    return {
      ...rest,
      ...(desired.addresses !== undefined ? { addresses: desired.addresses } : {}),
      ...(desired.attachedListenerSets !== undefined ? { attachedListenerSets: desired.attachedListenerSets } : {}),
      conditions: mergeConditions(desired.conditions, current.conditions),
      listeners: mergeListeners(desired.listeners, current.listeners),
    }
  }
  if (kind === "ListenerSet") {
    // A ListenerSet refused by its parent lists no listeners (as the reference clears them).
    const { listeners: _, ...rest } = current
    return {
      ...rest,
      conditions: mergeConditions(desired.conditions, current.conditions),
      ...(desired.listeners !== undefined ? { listeners: mergeListeners(desired.listeners, current.listeners) } : {}),
    }
  }
  // GatewayClass, and any other kind: the desired fields, conditions keeping their times.
  return {
    ...current,
    ...desired,
    ...(desired.conditions !== undefined
      ? { conditions: mergeConditions(desired.conditions, current.conditions) }
      : {}),
  }
}

/**
 * The status to write to an object of `kind` (the internal kind: `KubernetesGateway` for a
 * Gateway) that carries `current` so that it says what `desired` says; undefined when it does
 * already. `controllerName` tells our route parent entries from other controllers'.
 */
export const mergedStatus = (
  kind: string,
  desired: unknown,
  current: unknown,
  controllerName: string,
): Json | undefined => {
  const before = asRecord(current)
  const next = merge(kind, asRecord(desired), before, controllerName)
  return deepEqual(withoutTimes(next), withoutTimes(before)) ? undefined : next
}

/**
 * The JSON merge patch of the status subresource that turns `current` into `next`: a merge
 * patch keeps fields it does not name, so a field `next` no longer has is set to null.
 */
export const statusMergePatch = (current: unknown, next: Json): { readonly status: Json } => {
  const removed = Object.keys(asRecord(current)).filter((key) => next[key] === undefined)
  return { status: { ...next, ...Object.fromEntries(removed.map((key) => [key, null])) } }
}
