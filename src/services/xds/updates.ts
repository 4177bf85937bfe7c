/**
 * Turns successive PushContext inputs into push requests: which configs changed, and whether
 * the change is endpoint-only (an incremental EDS push) or needs a full push.
 */

import { type ConfigResource, resourceKey } from "../config-model/resource.js"
import { deepEqual } from "../config-store/snapshot.js"
import type { Endpoint } from "../registry/model.js"
import type { PushContextInput } from "./push-context.js"
import { type ConfigKey, makePushRequest, type PushRequest } from "./push-request.js"

/**
 * Keys whose group of items differs between two snapshots. The registry and the config store
 * hand unchanged items over as the same objects, so groups are compared element by element by
 * identity first; only a group with a replaced element is compared by content (`same`), which
 * keeps an endpoint change from walking the contents of every host.
 */
const changedKeys = <T>(
  before: ReadonlyArray<T>,
  after: ReadonlyArray<T>,
  keyOf: (item: T) => string,
  same: (a: T, b: T) => boolean = deepEqual,
): ReadonlyArray<string> => {
  if (before === after) return []
  if (before.length === after.length && before.every((item, i) => item === after[i])) return []
  const group = (items: ReadonlyArray<T>) => {
    const map = new Map<string, Array<T>>()
    for (const item of items) {
      const key = keyOf(item)
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

/** Only the spec of a config resource reaches generated resources. */
const sameSpec = (a: ConfigResource, b: ConfigResource): boolean => deepEqual(a.spec, b.spec)

const splitKey = (kind: string, key: string): ConfigKey => {
  const slash = key.indexOf("/")
  return { kind, namespace: key.slice(0, slash), name: key.slice(slash + 1) }
}

/** The push request a change of inputs calls for; undefined when nothing changed. */
export const diffInputs = (before: PushContextInput, after: PushContextInput, now: number): PushRequest | undefined => {
  if (before === after) return undefined
  const services = changedKeys(before.services, after.services, (s) => `${s.namespace}/${s.hostname}`)
  const endpoints = changedKeys(before.endpoints, after.endpoints, (e: Endpoint) => `${e.namespace}/${e.hostname}`)
  const configKey = (r: {
    readonly kind: string
    readonly meta: { readonly namespace: string; readonly name: string }
  }) => resourceKey(r as never).slice(r.kind.length + 1)
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
  ]
  if (configs.length === 0 && endpoints.length === 0) return undefined
  if (configs.length === 0) {
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
