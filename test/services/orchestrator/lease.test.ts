import { describe, expect, it } from "vitest"
import {
  decide,
  microTime,
  type Observation,
  type OrchLease,
  observe,
  released,
} from "../../../src/services/orchestrator/lease.js"

const base = { namespace: "mesh-system", name: "mesh-leader", leaseDurationMillis: 30_000 }
const T0 = Date.UTC(2025, 0, 1, 12, 0, 0)

const lease = (spec: OrchLease["spec"] | undefined, resourceVersion = "7"): OrchLease => ({
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  metadata: { name: "mesh-leader", namespace: "mesh-system", resourceVersion },
  ...(spec !== undefined ? { spec } : {}),
})

describe("microTime", () => {
  it("has six fractional digits", () => {
    expect(microTime(T0 + 123)).toBe("2025-01-01T12:00:00.123000Z")
  })
})

describe("decide", () => {
  it("creates the Lease when there is none", () => {
    const { decision } = decide({ ...base, identity: "a", lease: undefined, observed: undefined, nowMillis: T0 })
    expect(decision._tag).toBe("Create")
    if (decision._tag !== "Create") return
    expect(decision.lease.metadata).toEqual({ name: "mesh-leader", namespace: "mesh-system" })
    expect(decision.lease.spec).toEqual({
      holderIdentity: "a",
      leaseDurationSeconds: 30,
      acquireTime: microTime(T0),
      renewTime: microTime(T0),
      leaseTransitions: 0,
    })
  })

  it("renews its own Lease, keeping acquireTime, transitions and resourceVersion", () => {
    const current = lease({
      holderIdentity: "a",
      leaseDurationSeconds: 30,
      acquireTime: "t-acq",
      renewTime: "t-old",
      leaseTransitions: 3,
    })
    const { decision } = decide({ ...base, identity: "a", lease: current, observed: undefined, nowMillis: T0 })
    expect(decision).toMatchObject({
      _tag: "Update",
      takeover: false,
      lease: {
        metadata: { resourceVersion: "7" },
        spec: { holderIdentity: "a", acquireTime: "t-acq", renewTime: microTime(T0), leaseTransitions: 3 },
      },
    })
  })

  it("waits while another holder's Lease has not expired since it was last seen changing", () => {
    const current = lease({ holderIdentity: "b", leaseDurationSeconds: 30, renewTime: "r1" })
    const first = decide({ ...base, identity: "a", lease: current, observed: undefined, nowMillis: T0 })
    expect(first.decision).toEqual({ _tag: "Wait", holder: "b", expiresInMillis: 30_000 })
    // Unchanged 29 s later: still waiting, counted from the first sight.
    const later = decide({ ...base, identity: "a", lease: current, observed: first.observed, nowMillis: T0 + 29_000 })
    expect(later.decision).toEqual({ _tag: "Wait", holder: "b", expiresInMillis: 1_000 })
    // Renewed by its holder: the clock restarts.
    const renewed = lease({ holderIdentity: "b", leaseDurationSeconds: 30, renewTime: "r2" }, "8")
    const after = decide({ ...base, identity: "a", lease: renewed, observed: later.observed, nowMillis: T0 + 29_500 })
    expect(after.decision).toEqual({ _tag: "Wait", holder: "b", expiresInMillis: 30_000 })
  })

  it("ignores the holder's renewTime (clock skew): a stale-looking Lease first seen now is not expired", () => {
    const current = lease({ holderIdentity: "b", leaseDurationSeconds: 30, renewTime: microTime(T0 - 3_600_000) })
    expect(decide({ ...base, identity: "a", lease: current, observed: undefined, nowMillis: T0 }).decision._tag).toBe(
      "Wait",
    )
  })

  it("takes over an expired Lease and counts the transition", () => {
    const current = lease({
      holderIdentity: "b",
      leaseDurationSeconds: 10,
      acquireTime: "x",
      renewTime: "r1",
      leaseTransitions: 2,
    })
    const first = decide({ ...base, identity: "a", lease: current, observed: undefined, nowMillis: T0 })
    expect(first.decision).toMatchObject({ _tag: "Wait", expiresInMillis: 10_000 })
    const { decision } = decide({
      ...base,
      identity: "a",
      lease: current,
      observed: first.observed,
      nowMillis: T0 + 10_000,
    })
    expect(decision).toMatchObject({
      _tag: "Update",
      takeover: true,
      lease: {
        metadata: { resourceVersion: "7" },
        spec: {
          holderIdentity: "a",
          leaseDurationSeconds: 30,
          acquireTime: microTime(T0 + 10_000),
          leaseTransitions: 3,
        },
      },
    })
  })

  it("takes a released Lease (no holder) at once", () => {
    const current = lease({ leaseDurationSeconds: 1, leaseTransitions: 4 })
    const { decision } = decide({ ...base, identity: "a", lease: current, observed: undefined, nowMillis: T0 })
    expect(decision).toMatchObject({
      _tag: "Update",
      takeover: true,
      lease: { spec: { holderIdentity: "a", leaseTransitions: 5 } },
    })
    const empty = lease({ holderIdentity: "", leaseDurationSeconds: 30 })
    expect(decide({ ...base, identity: "a", lease: empty, observed: undefined, nowMillis: T0 }).decision._tag).toBe(
      "Update",
    )
  })

  it("treats a malformed spec as expired-by-default rather than failing", () => {
    const current = lease({ holderIdentity: "b", leaseDurationSeconds: -5, leaseTransitions: -1 } as never)
    const first = decide({ ...base, identity: "a", lease: current, observed: undefined, nowMillis: T0 })
    expect(first.decision).toEqual({ _tag: "Wait", holder: "b", expiresInMillis: 30_000 })
    const later = decide({ ...base, identity: "a", lease: current, observed: first.observed, nowMillis: T0 + 30_000 })
    expect(later.decision).toMatchObject({ _tag: "Update", lease: { spec: { leaseTransitions: 1 } } })
    const noSpec = decide({ ...base, identity: "a", lease: lease(undefined), observed: undefined, nowMillis: T0 })
    expect(noSpec.decision).toMatchObject({ _tag: "Update", takeover: true })
  })
})

describe("observe", () => {
  it("keeps the first sight of an unchanged record", () => {
    const l = lease({ holderIdentity: "b", renewTime: "r" })
    const first: Observation = observe(l, undefined, T0, 30_000)
    expect(observe(l, first, T0 + 5_000, 30_000)).toBe(first)
    expect(observe(lease({ holderIdentity: "b", renewTime: "r2" }), first, T0 + 5_000, 30_000).atMillis).toBe(
      T0 + 5_000,
    )
  })
})

describe("released", () => {
  it("clears the holder of our own Lease with a 1 s duration", () => {
    const mine = lease({ holderIdentity: "a", leaseDurationSeconds: 30, leaseTransitions: 2 })
    const out = released(mine, "a", T0)
    expect(out?.spec).toEqual({
      leaseDurationSeconds: 1,
      acquireTime: microTime(T0),
      renewTime: microTime(T0),
      leaseTransitions: 2,
    })
    expect(out?.metadata.resourceVersion).toBe("7")
  })
  it("never releases someone else's", () => {
    expect(released(lease({ holderIdentity: "b" }), "a", T0)).toBeUndefined()
  })
})
