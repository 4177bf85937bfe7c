/**
 * Leader election on a coordination.k8s.io/v1 Lease, the decision part: given the Lease as read
 * (or its absence), what this instance last observed of it, the time and its own identity —
 * create it, take it over, renew it, or wait. Pure; the loop that reads, writes and sleeps is
 * src/layers/orchestrator/leader-election.ts.
 *
 * As with the orchestrator's own client library, a holder's Lease expires `leaseDurationSeconds`
 * after *this instance last saw it change*, on this instance's clock, not after the `renewTime`
 * written in it: the holder's clock may be skewed from ours, while a holder that is alive
 * changes the record at every renewal.
 */
import type { OrchObject } from "./objects.js"
import { apiVersionOf, Resources } from "./resources.js"

/** coordination.k8s.io/v1 LeaseSpec (times are MicroTime: RFC 3339 with 6 fractional digits). */
export interface LeaseSpec {
  readonly holderIdentity?: string
  readonly leaseDurationSeconds?: number
  readonly acquireTime?: string
  readonly renewTime?: string
  readonly leaseTransitions?: number
}

export interface OrchLease extends OrchObject {
  readonly spec?: LeaseSpec
}

export interface ElectionTiming {
  /** How long a non-leader waits, from the last change it saw, before it may take the Lease. */
  readonly leaseDurationMillis: number
  /** How long the leader keeps trying to renew before it steps down; below the lease duration. */
  readonly renewDeadlineMillis: number
  /** The pause between attempts to acquire or renew. */
  readonly retryPeriodMillis: number
}

/** The reference's timing: a 30 s lease, renew deadline half of it, retry every quarter of it. */
export const DEFAULT_TIMING: ElectionTiming = {
  leaseDurationMillis: 30_000,
  renewDeadlineMillis: 15_000,
  retryPeriodMillis: 7_500,
}

/** The Lease name when the caller gives none. */
export const DEFAULT_LEASE_NAME = "mesh-leader"

/** What this instance last saw of the Lease, and when (its own clock). */
export interface Observation {
  /** The spec's election fields, serialized: any change of them is a sign of life. */
  readonly record: string
  readonly holder: string
  readonly leaseDurationMillis: number
  readonly atMillis: number
}

export type LeaseDecision =
  /** No Lease yet: create it, held by us. */
  | { readonly _tag: "Create"; readonly lease: OrchLease }
  /** Write the Lease (PUT with the read resourceVersion): a renewal, or a takeover. */
  | { readonly _tag: "Update"; readonly lease: OrchLease; readonly takeover: boolean }
  /** Someone else holds an unexpired Lease. */
  | { readonly _tag: "Wait"; readonly holder: string; readonly expiresInMillis: number }

export interface DecideInput {
  readonly namespace: string
  readonly name: string
  readonly identity: string
  /** The Lease as read; undefined when it does not exist. */
  readonly lease: OrchLease | undefined
  readonly observed: Observation | undefined
  readonly nowMillis: number
  /** The duration written into Leases this instance holds. */
  readonly leaseDurationMillis: number
}

/** MicroTime: `2006-01-02T15:04:05.000000Z` (the API server wants exactly six fractional digits). */
export const microTime = (millis: number): string => new Date(millis).toISOString().replace(/Z$/, "000Z")

const holderOf = (spec: LeaseSpec | undefined): string =>
  typeof spec?.holderIdentity === "string" ? spec.holderIdentity : ""

const recordOf = (spec: LeaseSpec | undefined): string =>
  JSON.stringify([
    holderOf(spec),
    spec?.leaseDurationSeconds ?? null,
    spec?.acquireTime ?? null,
    spec?.renewTime ?? null,
    spec?.leaseTransitions ?? null,
  ])

const transitionsOf = (spec: LeaseSpec | undefined): number =>
  typeof spec?.leaseTransitions === "number" && Number.isInteger(spec.leaseTransitions) && spec.leaseTransitions >= 0
    ? spec.leaseTransitions
    : 0

/**
 * The observation after reading `lease`: unchanged (same record) keeps the time it was first
 * seen; a changed record restarts the clock. A missing or non-positive duration in the Lease
 * counts as `fallbackMillis`.
 */
export const observe = (
  lease: OrchLease | undefined,
  previous: Observation | undefined,
  nowMillis: number,
  fallbackMillis: number,
): Observation => {
  const record = recordOf(lease?.spec)
  if (previous !== undefined && previous.record === record) return previous
  const seconds = lease?.spec?.leaseDurationSeconds
  return {
    record,
    holder: holderOf(lease?.spec),
    leaseDurationMillis:
      typeof seconds === "number" && Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : fallbackMillis,
    atMillis: nowMillis,
  }
}

const leaseObject = (input: DecideInput, spec: LeaseSpec, base?: OrchLease): OrchLease => ({
  ...(base ?? {}),
  apiVersion: apiVersionOf(Resources.leases),
  kind: Resources.leases.kind,
  metadata: {
    ...(base?.metadata ?? {}),
    name: input.name,
    namespace: input.namespace,
  },
  spec,
})

/** What to do with the Lease now, and the observation to keep. */
export const decide = (input: DecideInput): { readonly decision: LeaseDecision; readonly observed: Observation } => {
  const now = microTime(input.nowMillis)
  const durationSeconds = Math.max(1, Math.round(input.leaseDurationMillis / 1000))
  const observed = observe(input.lease, input.observed, input.nowMillis, input.leaseDurationMillis)
  if (input.lease === undefined) {
    const spec: LeaseSpec = {
      holderIdentity: input.identity,
      leaseDurationSeconds: durationSeconds,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: 0,
    }
    return { decision: { _tag: "Create", lease: leaseObject(input, spec) }, observed }
  }
  const old = input.lease.spec
  const holder = holderOf(old)
  if (holder === input.identity) {
    // Ours (also after a restart under the same identity): renew, keeping when it was acquired.
    const spec: LeaseSpec = {
      ...old,
      holderIdentity: input.identity,
      leaseDurationSeconds: durationSeconds,
      acquireTime: old?.acquireTime ?? now,
      renewTime: now,
      leaseTransitions: transitionsOf(old),
    }
    return { decision: { _tag: "Update", lease: leaseObject(input, spec, input.lease), takeover: false }, observed }
  }
  const expiresInMillis = observed.atMillis + observed.leaseDurationMillis - input.nowMillis
  if (holder !== "" && expiresInMillis > 0) {
    return { decision: { _tag: "Wait", holder, expiresInMillis }, observed }
  }
  // Released (no holder) or expired: take it over.
  const spec: LeaseSpec = {
    ...old,
    holderIdentity: input.identity,
    leaseDurationSeconds: durationSeconds,
    acquireTime: now,
    renewTime: now,
    leaseTransitions: transitionsOf(old) + 1,
  }
  return { decision: { _tag: "Update", lease: leaseObject(input, spec, input.lease), takeover: true }, observed }
}

/**
 * The Lease given up on shutdown: no holder and a 1 s duration, so the next candidate takes it
 * at its next attempt instead of waiting out the lease duration. Undefined when `lease` is not
 * ours (never release someone else's).
 */
export const released = (lease: OrchLease, identity: string, nowMillis: number): OrchLease | undefined => {
  if (holderOf(lease.spec) !== identity) return undefined
  const now = microTime(nowMillis)
  const { holderIdentity: _holder, ...rest } = lease.spec ?? {}
  return {
    ...lease,
    spec: {
      ...rest,
      leaseDurationSeconds: 1,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: transitionsOf(lease.spec),
    },
  }
}
