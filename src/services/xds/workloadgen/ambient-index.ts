/**
 * The ambient index: what the node proxy's workload API serves, from the PushContext's services
 * and endpoints and the ambient input (pods, namespaces, waypoints, WorkloadEntries,
 * AuthorizationPolicies), as the reference indexes them: an Address per pod, WorkloadEntry and
 * Service (address-messages.ts), the L4 authorizations (authorization.ts) and per waypoint with
 * known pods its allow policy.
 *
 * Built once per push, but not from scratch (issue 40): with 10,000 pods a pod's readiness flip
 * must not rebuild and re-key 10,000 messages. Each object's message is kept (index-memo.ts) while
 * the object and what it reads are unchanged: its namespace's scope (the namespace's labels, its
 * services, the selector policies that may apply, and the mesh-wide part: network, trust domain,
 * waypoints and their allow policies) and the endpoint lists of the services selecting it. A
 * message built again but equal to the one last served under its name is that one, so the
 * resource cache, keyed by the message object, encodes only what changed. What remains per push
 * is a pass over the objects comparing references, and the lookup maps.
 */

import type { AmbientInput, AmbientPod } from "../../ambient/input.js"
import type { ConfigResource } from "../../config-model/resource.js"
import type { AuthorizationPolicySpec } from "../../config-model/schemas/authorization-policy.js"
import type { KubernetesGatewaySpec } from "../../config-model/schemas/gateway-api/types.js"
import { deepEqual } from "../../config-store/snapshot.js"
import { Labels } from "../../constants.js"
import { objectNames } from "../../gateway-api/deployment/names.js"
import { GATEWAY_NAME_LABEL } from "../../gateway-api/model.js"
import { waypointAttachment, waypointKey, waypointTrafficType } from "../../gateway-api/waypoints/binding.js"
import { WAYPOINT_CLASS } from "../../gateway-api/waypoints/names.js"
import type { Endpoint, Service } from "../../registry/model.js"
import { memoOf } from "../model/local-slot.js"
import {
  endpointPorts,
  HBONE_PORT,
  podAddress,
  type Reads,
  serviceAddress,
  workloadEntryAddress,
} from "./address-messages.js"
import { type L4Authorization, type Translated, translatePolicy, waypointAllowPolicy } from "./authorization.js"
import {
  type AddressEntry,
  type AmbientIndex,
  type AmbientIndexMemo,
  type Built,
  makeAmbientIndexMemo,
  type Scope,
  type Shared,
  sameEntries,
  sameItems,
  sameLabels,
  stableLists,
  type Waypoint,
} from "./index-memo.js"

export { AMBIENT_REDIRECTION, HBONE_PORT } from "./address-messages.js"
export type { AddressEntry, AmbientIndex, AuthorizationEntry } from "./index-memo.js"

export interface IndexSources {
  readonly ambient: AmbientInput
  readonly services: ReadonlyArray<Service>
  /** Endpoints by service host name (the PushContext's `endpointsByHost`). */
  readonly endpointsByHost: ReadonlyMap<string, ReadonlyArray<Endpoint>>
  readonly authorizationPolicies: ReadonlyArray<ConfigResource<AuthorizationPolicySpec>>
  readonly trustDomain: string
  readonly domainSuffix: string
  readonly rootNamespace: string
}

/** The waypoints, each the same object as in the last build while equal. */
const waypointsOf = (
  memo: AmbientIndexMemo,
  gateways: ReadonlyArray<ConfigResource<KubernetesGatewaySpec>>,
  classLabels: ReadonlyMap<string, Readonly<Record<string, string>>>,
  pods: ReadonlyArray<AmbientPod>,
  domainSuffix: string,
): ReadonlyMap<string, Waypoint> => {
  // The service accounts of each waypoint's pods, in one pass over the pods.
  const accounts = new Map<string, Set<string>>()
  for (const pod of pods) {
    const gateway = pod.labels[GATEWAY_NAME_LABEL]
    if (gateway !== undefined) memoOf(accounts, `${pod.namespace}/${gateway}`, () => new Set()).add(pod.serviceAccount)
  }
  const out = new Map<string, Waypoint>()
  for (const gateway of gateways) {
    if (gateway.spec.gatewayClassName !== WAYPOINT_CLASS) continue
    const { name, namespace, annotations, labels } = gateway.meta
    const service = objectNames({ name, annotations }, WAYPOINT_CLASS, "waypoint").deployment
    const ref = { name, namespace }
    const key = waypointKey(ref)
    const fresh: Waypoint = {
      ref,
      trafficType: waypointTrafficType(labels, classLabels.get(gateway.spec.gatewayClassName)),
      attachment: waypointAttachment(gateway.spec.listeners),
      address: {
        hostname: { namespace, hostname: `${service}.${namespace}.svc.${domainSuffix}` },
        hbone_mtls_port: HBONE_PORT,
      },
      serviceAccounts: [...(accounts.get(key) ?? [])],
    }
    const before = memo.waypoints.get(gateway)
    const waypoint = before !== undefined && deepEqual(before, fresh) ? before : fresh
    memo.waypoints.set(gateway, waypoint)
    out.set(key, waypoint)
  }
  return out
}

const translated = (
  memo: AmbientIndexMemo,
  policy: ConfigResource<AuthorizationPolicySpec>,
  rootNamespace: string,
): Translated => {
  const held = memo.policies.get(policy)
  if (held?.rootNamespace === rootNamespace) return held.translated
  const fresh = translatePolicy(policy, rootNamespace)
  memo.policies.set(policy, { rootNamespace, translated: fresh })
  return fresh
}

const allowPolicyOf = (memo: AmbientIndexMemo, waypoint: Waypoint, trustDomain: string) => {
  const held = memo.waypointPolicies.get(waypoint)
  if (held?.trustDomain === trustDomain) return held.policy
  const policy = waypointAllowPolicy(waypoint.ref.namespace, waypoint.ref.name, waypoint.serviceAccounts, trustDomain)
  memo.waypointPolicies.set(waypoint, { trustDomain, policy })
  return policy
}

/** `fresh`, or the last build's shared part when equal to it. */
const sharedOf = (memo: AmbientIndexMemo, fresh: Shared): Shared => {
  const before = memo.last?.shared
  return before !== undefined &&
    before.clusterId === fresh.clusterId &&
    before.clusterNetwork === fresh.clusterNetwork &&
    before.trustDomain === fresh.trustDomain &&
    sameEntries(before.waypoints, fresh.waypoints) &&
    sameEntries(before.waypointPolicies, fresh.waypointPolicies)
    ? before
    : fresh
}

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

export const buildAmbientIndex = (
  sources: IndexSources,
  memo: AmbientIndexMemo = makeAmbientIndexMemo(),
): AmbientIndex => {
  const { ambient, trustDomain, rootNamespace } = sources
  const { settings } = ambient
  const last = memo.last
  const classLabels = new Map(ambient.gatewayClasses.map((c) => [c.meta.name, c.meta.labels]))
  const waypoints = waypointsOf(memo, ambient.gateways, classLabels, ambient.pods, sources.domainSuffix)
  const waypointPolicies = new Map<string, L4Authorization>()
  if (settings.autoAllowWaypointPolicy)
    for (const [key, waypoint] of waypoints) {
      const policy = allowPolicyOf(memo, waypoint, trustDomain)
      if (policy !== undefined) waypointPolicies.set(key, policy)
    }
  const shared = sharedOf(memo, {
    clusterId: settings.clusterId,
    clusterNetwork: ambient.namespaceLabels.get(settings.systemNamespace)?.[Labels.network] ?? "",
    trustDomain,
    waypoints,
    waypointPolicies,
  })

  // Policies: translated once per resource; selector-scoped ones are named by the workloads they select.
  const notices: Array<string> = []
  const policies: Array<L4Authorization> = []
  for (const policy of sources.authorizationPolicies) {
    const { authorization, notice } = translated(memo, policy, rootNamespace)
    if (notice !== undefined) notices.push(notice)
    if (authorization !== undefined) policies.push(authorization)
  }
  const selectorPolicies = policies.filter((p) => p.scope === "WORKLOAD_SELECTOR")

  // Services, and which of them may select a namespace's workloads (same namespace, non-empty selector).
  const servedServices = sources.services.filter((s) => s.addresses.length > 0 || s.selector !== undefined)
  const servicesByNamespace = new Map<string, Array<Service>>()
  for (const s of servedServices) memoOf(servicesByNamespace, s.namespace, () => []).push(s)

  const scopes = new Map<string, Scope>()
  const scopeOf = (namespace: string): Scope =>
    memoOf(scopes, namespace, () => {
      const labels = ambient.namespaceLabels.get(namespace)
      const services = servicesByNamespace.get(namespace) ?? []
      const applying = selectorPolicies.filter((p) => p.namespace === namespace || p.namespace === rootNamespace)
      const before = last?.scopes.get(namespace)
      if (
        before !== undefined &&
        before.shared === shared &&
        sameLabels(before.namespace?.labels, labels) &&
        sameItems(before.services, services) &&
        sameItems(before.policies, applying)
      )
        return before
      return {
        shared,
        namespace: labels === undefined ? undefined : { name: namespace, namespace: "", labels },
        services,
        policies: applying,
      }
    })

  const lists = stableLists(memo, sources.endpointsByHost)
  const reads: Reads = { lists, ports: (list) => memoOf(memo.endpointPorts, list, () => endpointPorts(list)) }
  const served = last?.index.byName
  /** A rebuilt entry equal to the one last served under its name is that one (the cache's key). */
  const keep = (next: Built): Built => {
    const entry = next.entry
    const before = entry === undefined ? undefined : served?.get(entry.name)
    return entry !== undefined &&
      before !== undefined &&
      sameItems(before.addresses, entry.addresses) &&
      deepEqual(before.message, entry.message)
      ? { ...next, entry: before }
      : next
  }
  /** The object's record when built from this scope and these endpoint lists, else a new one. */
  const builtOf = <K extends object>(records: WeakMap<K, Built>, key: K, scope: Scope, make: () => Built): Built => {
    const held = records.get(key)
    if (held !== undefined && held.scope === scope && held.lists.every((l, i) => l === lists.get(held.hosts[i]!)))
      return held
    const next = keep(make())
    records.set(key, next)
    return next
  }

  const entries: Array<AddressEntry> = []
  const add = (record: Built) => {
    if (record.entry !== undefined) entries.push(record.entry)
    if (record.notices.length > 0) notices.push(...record.notices)
  }
  for (const pod of ambient.pods) {
    const scope = scopeOf(pod.namespace)
    add(builtOf(memo.pods, pod, scope, () => podAddress(pod, scope, reads)))
  }
  for (const entry of ambient.workloadEntries) {
    const scope = scopeOf(entry.meta.namespace)
    add(builtOf(memo.workloadEntries, entry, scope, () => workloadEntryAddress(entry, scope, reads)))
  }
  for (const s of servedServices) {
    const scope = scopeOf(s.namespace)
    add(builtOf(memo.services, s, scope, () => serviceAddress(s, scope)))
  }

  // Sorted by name: the last build's order while the names are the same in the same places.
  const order =
    last !== undefined &&
    last.built.length === entries.length &&
    entries.every((e, i) => e === last.built[i] || e.name === last.built[i]!.name)
      ? last.order
      : entries.map((_, i) => i).sort((a, b) => byName(entries[a]!.name, entries[b]!.name) || a - b)
  const addresses = order.map((i) => entries[i]!)
  const byNameMap = new Map(addresses.map((e) => [e.name, e]))
  const byAddress = new Map<string, Array<AddressEntry>>()
  for (const e of addresses) for (const a of e.addresses) memoOf(byAddress, a, () => []).push(e)
  const authorizations = [...policies, ...waypointPolicies.values()]
    .map((p) => ({ name: p.key, message: p.message }))
    .sort((a, b) => byName(a.name, b.name))
  const index: AmbientIndex = { addresses, byName: byNameMap, byAddress, authorizations, notices }
  memo.last = { shared, scopes, lists, index, built: entries, order }
  return index
}
