/**
 * What one ambient index build leaves for the next, so that a pod's readiness flip rebuilds one
 * workload's message instead of 10,000 (issue 40): kept in the PushContext lineage's memo
 * (`push.memo.local`), which contexts built from a previous one share.
 *
 * Nothing here is trusted blindly. Each record names the inputs it was built from, and the next
 * build reuses it only when those are the same objects (or, for small inputs rebuilt on every
 * push, equal): a pod's record is keyed by the pod's facts object and holds the namespace scope
 * and the endpoint lists it read; a rebuilt message equal to the last one served under its name
 * is replaced by that one. A build may therefore run against any record left by any context of
 * the lineage, older or newer, and still return exactly what a build from scratch returns; equal
 * messages stay the same object, which is what the resource cache's key follows (generator.ts).
 */

import type { AmbientPod } from "../../ambient/input.js"
import type { ConfigResource } from "../../config-model/resource.js"
import type { AuthorizationPolicySpec } from "../../config-model/schemas/authorization-policy.js"
import type { KubernetesGatewaySpec } from "../../config-model/schemas/gateway-api/types.js"
import type { WorkloadEntrySpec } from "../../config-model/schemas/workload-entry.js"
import type { Meta, WaypointInfo } from "../../gateway-api/waypoints/binding.js"
import type { Endpoint, Service } from "../../registry/model.js"
import type { Authorization, GatewayAddress, Workload_Address } from "../protocol/xds-types.js"
import type { L4Authorization, Translated } from "./authorization.js"

export interface AddressEntry {
  /** The resource name: a workload's uid or a service's `namespace/hostname`. */
  readonly name: string
  /** An `Address` (`{ workload }` or `{ service }`): the same object while its content is. */
  readonly message: Workload_Address
  /** `network/ip` of each address, for on-demand requests. */
  readonly addresses: ReadonlyArray<string>
}

export interface AuthorizationEntry {
  readonly name: string
  readonly message: Authorization
}

export interface AmbientIndex {
  /** Sorted by name. */
  readonly addresses: ReadonlyArray<AddressEntry>
  readonly byName: ReadonlyMap<string, AddressEntry>
  /** `network/ip` → the entries with that address. */
  readonly byAddress: ReadonlyMap<string, ReadonlyArray<AddressEntry>>
  /** Sorted by name. */
  readonly authorizations: ReadonlyArray<AuthorizationEntry>
  /** Policies the node proxy does not (fully) enforce, waypoints not usable, ... */
  readonly notices: ReadonlyArray<string>
}

/** A ready waypoint: a Gateway of class `mesh-waypoint`, reached at its Service's host name. */
export interface Waypoint extends WaypointInfo {
  readonly address: GatewayAddress
  readonly serviceAccounts: ReadonlyArray<string>
}

/** What every message of a build reads: the same object from build to build while all of it is equal. */
export interface Shared {
  readonly clusterId: string
  readonly clusterNetwork: string
  readonly trustDomain: string
  readonly waypoints: ReadonlyMap<string, Waypoint>
  /** The synthetic allow policy of each waypoint with known pods, by waypoint key. */
  readonly waypointPolicies: ReadonlyMap<string, L4Authorization>
}

/** What a namespace's workloads and services read beyond their own object. */
export interface Scope {
  readonly shared: Shared
  /** The namespace as binding reads it; undefined when its labels are not known. */
  readonly namespace: Meta | undefined
  /** Its services the workload API serves (those that may select its workloads). */
  readonly services: ReadonlyArray<Service>
  /** Selector-scoped policies of the namespace and of the root namespace. */
  readonly policies: ReadonlyArray<L4Authorization>
}

/** One object's part of the index and what it was built from. */
export interface Built {
  readonly scope: Scope
  /** The hosts of the services selecting the object, and their endpoint lists then (target ports). */
  readonly hosts: ReadonlyArray<string>
  readonly lists: ReadonlyArray<ReadonlyArray<Endpoint> | undefined>
  /** Undefined for an object the workload API does not serve (host network, no address). */
  readonly entry: AddressEntry | undefined
  readonly notices: ReadonlyArray<string>
}

export interface AmbientIndexMemo {
  readonly policies: WeakMap<
    ConfigResource<AuthorizationPolicySpec>,
    { readonly rootNamespace: string; readonly translated: Translated }
  >
  readonly waypoints: WeakMap<ConfigResource<KubernetesGatewaySpec>, Waypoint>
  readonly waypointPolicies: WeakMap<
    Waypoint,
    { readonly trustDomain: string; readonly policy: L4Authorization | undefined }
  >
  readonly pods: WeakMap<AmbientPod, Built>
  readonly workloadEntries: WeakMap<ConfigResource<WorkloadEntrySpec>, Built>
  readonly services: WeakMap<Service, Built>
  /** `service/port name/ip` → the endpoint's port, per endpoint list. */
  readonly endpointPorts: WeakMap<ReadonlyArray<Endpoint>, ReadonlyMap<string, number>>
  /** The last build's: each namespace's scope, each host's endpoint list, the order of its entries. */
  last?: {
    readonly shared: Shared
    readonly scopes: ReadonlyMap<string, Scope>
    readonly lists: ReadonlyMap<string, ReadonlyArray<Endpoint>>
    readonly index: AmbientIndex
    /** Its entries in build order, and the build position of each sorted entry. */
    readonly built: ReadonlyArray<AddressEntry>
    readonly order: ReadonlyArray<number>
  }
}

export const makeAmbientIndexMemo = (): AmbientIndexMemo => ({
  policies: new WeakMap(),
  waypoints: new WeakMap(),
  waypointPolicies: new WeakMap(),
  pods: new WeakMap(),
  workloadEntries: new WeakMap(),
  services: new WeakMap(),
  endpointPorts: new WeakMap(),
})

/** Same length and the same items (by identity) in the same order. */
export const sameItems = <T>(a: ReadonlyArray<T>, b: ReadonlyArray<T>): boolean => {
  if (a === b) return true
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** Same keys with the same values (by identity). */
export const sameEntries = <K, V>(a: ReadonlyMap<K, V>, b: ReadonlyMap<K, V>): boolean => {
  if (a === b) return true
  if (a.size !== b.size) return false
  for (const [key, value] of a) if (b.get(key) !== value) return false
  return true
}

/** Equal label sets (or both absent). */
export const sameLabels = (
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean => {
  if (a === b) return true
  if (a === undefined || b === undefined) return false
  const keys = Object.keys(a)
  if (keys.length !== Object.keys(b).length) return false
  return keys.every((k) => b[k] === a[k])
}

/**
 * Each host's endpoint list as the last build held it when its endpoints are the same objects in
 * the same order (a rebuilt PushContext groups them into new arrays): records that read a list
 * compare it by identity.
 */
export const stableLists = (
  memo: AmbientIndexMemo,
  endpointsByHost: ReadonlyMap<string, ReadonlyArray<Endpoint>>,
): ReadonlyMap<string, ReadonlyArray<Endpoint>> => {
  const before = memo.last?.lists
  const out = new Map<string, ReadonlyArray<Endpoint>>()
  for (const [host, list] of endpointsByHost) {
    const held = before?.get(host)
    out.set(host, held !== undefined && sameItems(held, list) ? held : list)
  }
  return out
}
