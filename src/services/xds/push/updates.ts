/**
 * Turns successive PushContext inputs into push requests: which configs changed, and whether
 * the change is endpoint-only (an incremental EDS push) or needs a full push.
 */

import { type ConfigResource, resourceKey } from "../../config-model/resource.js"
import { deepEqual } from "../../config-store/snapshot.js"
import type { Credential } from "../../credentials/credential.js"
import type { Endpoint, Service } from "../../registry/model.js"
import { emptyProxyConfigInput, type PushContextInput } from "../model/push-context.js"
import { replacedRun } from "../model/replaced-run.js"
import { TypeUrl } from "../protocol/type-urls.js"
import { type ConfigKey, makePushRequest, type PushRequest } from "./push-request.js"

const WORKLOAD_API_TYPES: ReadonlySet<string> = new Set([TypeUrl.Address, TypeUrl.Authorization])

/**
 * A key function remembered per item: inputs are immutable snapshots (an unchanged item is
 * handed over as the same object), so an item's key never changes, and computing it again for
 * every item of every diff would cost more than the rest of the diff.
 */
const memoKey = <T extends object>(keyOf: (item: T) => string) => {
  const keys = new WeakMap<T, string>()
  return (item: T): string => {
    let key = keys.get(item)
    if (key === undefined) {
      key = keyOf(item)
      keys.set(item, key)
    }
    return key
  }
}

/** The keys (among `only`, when given) whose groups of items differ, in order, by `same`. */
const differingGroups = <T>(
  before: ReadonlyArray<T>,
  after: ReadonlyArray<T>,
  keyOf: (item: T) => string,
  same: (a: T, b: T) => boolean,
  only: ReadonlySet<string> | undefined,
): ReadonlyArray<string> => {
  const group = (items: ReadonlyArray<T>) => {
    const map = new Map<string, Array<T>>()
    for (const item of items) {
      const key = keyOf(item)
      if (only !== undefined && !only.has(key)) continue
      const list = map.get(key)
      if (list === undefined) map.set(key, [item])
      else list.push(item)
    }
    return map
  }
  const sameGroup = (a: ReadonlyArray<T>, b: ReadonlyArray<T>): boolean => {
    if (a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && !same(a[i]!, b[i]!)) return false
    return true
  }
  const a = group(before)
  const b = group(after)
  const out: Array<string> = []
  for (const [key, items] of b) {
    const old = a.get(key)
    if (old === undefined || !sameGroup(old, items)) out.push(key)
  }
  for (const key of a.keys()) if (!b.has(key)) out.push(key)
  return out
}

/**
 * Keys whose group of items differs between two snapshots (a group's order counts: it is the
 * order of the generated resources). The registry and the config store hand unchanged items
 * over as the same objects, so a change usually leaves a long common prefix and suffix of the
 * same objects at the same places; those parts contribute the same items, in the same order,
 * to every group on both sides, so only the differing middle parts are looked at.
 */
const changedKeys = <T extends object>(
  before: ReadonlyArray<T>,
  after: ReadonlyArray<T>,
  keyOf: (item: T) => string,
  same: (a: T, b: T) => boolean = deepEqual,
): ReadonlyArray<string> => {
  if (before === after) return []
  const { removed, added } = replacedRun(before, after)
  if (removed.length === 0 && added.length === 0) return []
  return changedMiddleKeys(removed, added, keyOf, same)
}

/**
 * `changedKeys` over the differing middle parts: the items present in both are found by
 * identity, and only the groups of the items present on one side are compared by content
 * (`same`). When the items present in both moved relative to each other, every group is compared.
 */
const changedMiddleKeys = <T extends object>(
  before: ReadonlyArray<T>,
  after: ReadonlyArray<T>,
  keyOf: (item: T) => string,
  same: (a: T, b: T) => boolean,
): ReadonlyArray<string> => {
  const position = new Map<T, number>()
  for (let i = 0; i < before.length; i++) position.set(before[i]!, i)
  const kept = new Set<T>()
  const suspects = new Set<string>()
  let found = 0
  let last = -1
  let inOrder = true
  for (const item of after) {
    const at = position.get(item)
    if (at === undefined) {
      suspects.add(keyOf(item))
      continue
    }
    if (at < last) inOrder = false
    last = at
    found++
    kept.add(item)
  }
  for (const item of before) if (!kept.has(item)) suspects.add(keyOf(item))
  // The same object twice in a snapshot defeats matching by identity: compare every group.
  const distinct = position.size === before.length && kept.size === found
  if (!inOrder || !distinct) return differingGroups(before, after, keyOf, same, undefined)
  return suspects.size === 0 ? [] : differingGroups(before, after, keyOf, same, suspects)
}

/** Only the spec of a config resource reaches generated resources. */
const sameSpec = (a: ConfigResource, b: ConfigResource): boolean => deepEqual(a.spec, b.spec)

const splitKey = (kind: string, key: string): ConfigKey => {
  const slash = key.indexOf("/")
  return { kind, namespace: key.slice(0, slash), name: key.slice(slash + 1) }
}

const serviceKey = memoKey((s: Service) => `${s.namespace}/${s.hostname}`)
const endpointKey = memoKey((e: Endpoint) => `${e.namespace}/${e.hostname}`)
const configKey = memoKey((r: ConfigResource) => resourceKey(r).slice(r.kind.length + 1))

/** The proxy-only kinds (gateways, sidecars, ...) and the config kind each change is reported as. */
const PROXY_CONFIG_KINDS = [
  ["gateways", "Gateway"],
  ["sidecars", "Sidecar"],
  ["envoyFilters", "EnvoyFilter"],
  ["requestAuthentications", "RequestAuthentication"],
  ["telemetries", "Telemetry"],
  ["wasmPlugins", "WasmPlugin"],
] as const

const credentialKey = memoKey((c: Credential) => `${c.namespace}/${c.name}`)

/** What changed in the config only proxies read (the PushContext makes any of it a full push). */
const proxyConfigChanges = (before: PushContextInput, after: PushContextInput): ReadonlyArray<ConfigKey> => {
  const a = before.proxyConfig ?? emptyProxyConfigInput
  const b = after.proxyConfig ?? emptyProxyConfigInput
  if (a === b) return []
  const out: Array<ConfigKey> = []
  for (const [field, kind] of PROXY_CONFIG_KINDS)
    for (const key of changedKeys<ConfigResource>(a[field], b[field], configKey, sameSpec))
      out.push(splitKey(kind, key))
  for (const key of changedKeys(a.credentials ?? [], b.credentials ?? [], credentialKey))
    out.push(splitKey("Secret", key))
  return out
}

/** Key sets the control plane fetched changed: every RequestAuthentication using them may generate anew. */
const jwksChanges = (before: PushContextInput, after: PushContextInput): ReadonlyArray<ConfigKey> => {
  if (before.jwks?.resolved === after.jwks?.resolved && before.jwks?.mode === after.jwks?.mode) return []
  return (after.proxyConfig?.requestAuthentications ?? []).map((ra) => ({
    kind: "RequestAuthentication",
    namespace: ra.meta.namespace,
    name: ra.meta.name,
  }))
}

const headless = new WeakMap<ReadonlyArray<Service>, ReadonlySet<string>>()
/** `namespace/hostname` of the services without a VIP whose endpoints are addressed directly (resolution NONE). */
const headlessKeys = (services: ReadonlyArray<Service>): ReadonlySet<string> => {
  let keys = headless.get(services)
  if (keys === undefined) {
    keys = new Set(services.filter((s) => s.resolution === "NONE" && s.addresses.length === 0).map(serviceKey))
    headless.set(services, keys)
  }
  return keys
}

/** The push request a change of inputs calls for; undefined when nothing changed. */
export const diffInputs = (before: PushContextInput, after: PushContextInput, now: number): PushRequest | undefined => {
  if (before === after) return undefined
  const services = changedKeys(before.services, after.services, serviceKey)
  const endpoints = changedKeys(before.endpoints, after.endpoints, endpointKey)
  const vs = changedKeys(before.virtualServices, after.virtualServices, configKey, sameSpec)
  const dr = changedKeys(before.destinationRules, after.destinationRules, configKey, sameSpec)
  const pa = changedKeys(before.peerAuthentications ?? [], after.peerAuthentications ?? [], configKey, sameSpec)
  const ap = changedKeys(before.authorizationPolicies ?? [], after.authorizationPolicies ?? [], configKey, sameSpec)
  const configs: Array<ConfigKey> = [
    ...services.map((k) => splitKey("ServiceEntry", k)),
    ...vs.map((k) => splitKey("VirtualService", k)),
    ...dr.map((k) => splitKey("DestinationRule", k)),
    ...pa.map((k) => splitKey("PeerAuthentication", k)),
    ...ap.map((k) => splitKey("AuthorizationPolicy", k)),
    ...proxyConfigChanges(before, after),
    ...jwksChanges(before, after),
  ]
  if (before.ambient !== after.ambient) {
    const pods: ConfigKey = { kind: "Pod", namespace: "", name: "ambient" }
    // The pods (and what else the ambient input holds) reach only the node proxy's workload API.
    if (configs.length === 0 && endpoints.length === 0)
      return makePushRequest({
        full: true,
        configsUpdated: [pods],
        reason: "config",
        start: now,
        onlyTypes: WORKLOAD_API_TYPES,
      })
    configs.push(pods)
  }
  if (configs.length === 0 && endpoints.length === 0) return undefined
  // A headless service's endpoints are listeners of their own (outbound/plan.ts): a full push.
  if (configs.length === 0 && !endpoints.some((key) => headlessKeys(after.services).has(key))) {
    return makePushRequest({
      full: false,
      configsUpdated: endpoints.map((k) => splitKey("ServiceEntry", k)),
      reason: "endpoint",
      start: now,
    })
  }
  return makePushRequest({
    full: true,
    configsUpdated: [...configs, ...endpoints.map((k) => splitKey("ServiceEntry", k))],
    reason: services.length > 0 ? "service" : "config",
    start: now,
  })
}
