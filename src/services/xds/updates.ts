/**
 * Turns successive PushContext inputs into push requests: which configs changed, and whether
 * the change is endpoint-only (an incremental EDS push) or needs a full push.
 */

import { resourceKey } from "../config-model/resource.js"
import type { Endpoint } from "../registry/model.js"
import type { PushContextInput } from "./push-context.js"
import { type ConfigKey, makePushRequest, type PushRequest } from "./push-request.js"

const json = (value: unknown): string => JSON.stringify(value) ?? ""

const changedKeys = <T>(
  before: ReadonlyArray<T>,
  after: ReadonlyArray<T>,
  keyOf: (item: T) => string,
  digestOf: (items: ReadonlyArray<T>) => string = json,
): ReadonlyArray<string> => {
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
  const a = group(before)
  const b = group(after)
  const out: Array<string> = []
  for (const [key, items] of b) {
    const old = a.get(key)
    if (old === undefined || (old !== items && digestOf(old) !== digestOf(items))) out.push(key)
  }
  for (const key of a.keys()) if (!b.has(key)) out.push(key)
  return out
}

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
  const vs = changedKeys(before.virtualServices, after.virtualServices, configKey, (items) =>
    json(items.map((r) => r.spec)),
  )
  const dr = changedKeys(before.destinationRules, after.destinationRules, configKey, (items) =>
    json(items.map((r) => r.spec)),
  )
  const pa = changedKeys(before.peerAuthentications ?? [], after.peerAuthentications ?? [], configKey, (items) =>
    json(items.map((r) => r.spec)),
  )
  const ap = changedKeys(before.authorizationPolicies ?? [], after.authorizationPolicies ?? [], configKey, (items) =>
    json(items.map((r) => r.spec)),
  )
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
