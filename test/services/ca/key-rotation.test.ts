/** The pure rules of a root key rotation (issue 43): when phase (a) ends, when a root retires, key mismatch. */
import { Duration } from "effect"
import { describe, expect, it } from "vitest"
import {
  bundleVersion,
  keyMismatch,
  phaseGaugeValue,
  publishDecision,
  retireAtMs,
} from "../../../src/services/ca/key-rotation.js"

const timing = { publishMinWait: Duration.seconds(30), publishTimeout: Duration.minutes(10) }

describe("publishDecision", () => {
  it("waits for the minimum time even when every agent acknowledged", () => {
    expect(publishDecision(0, 29_999, { total: 2, current: 2 }, timing)._tag).toBe("wait")
    expect(publishDecision(0, 30_000, { total: 2, current: 2 }, timing)).toEqual({
      _tag: "switch",
      reason: "every connected agent (2) acknowledged the bundle",
    })
  })

  it("waits for agents that have not acknowledged, until the timeout", () => {
    expect(publishDecision(0, 60_000, { total: 3, current: 1 }, timing)).toEqual({
      _tag: "wait",
      reason: "2 of 3 agent(s) have not acknowledged the bundle",
    })
    expect(publishDecision(0, 600_000, { total: 3, current: 1 }, timing)).toEqual({
      _tag: "switch",
      reason: "publish timeout reached with 2 of 3 agent(s) not acknowledging the bundle",
    })
  })

  it("switches after the minimum wait when no agent watches", () => {
    expect(publishDecision(1000, 31_000, { total: 0, current: 0 }, timing)._tag).toBe("switch")
  })
})

describe("retireAtMs", () => {
  it("keeps the old root for the longest workload lifetime after the switch, not past its expiry", () => {
    expect(retireAtMs(10_000_000, 1000, Duration.hours(1))).toBe(3_601_000)
    expect(retireAtMs(5000, 1000, Duration.hours(1))).toBe(5000)
  })
})

describe("keyMismatch", () => {
  it("accepts RSA of the configured size and names anything else", () => {
    expect(keyMismatch({ type: "rsa", modulusLength: 2048 }, 2048)).toBeUndefined()
    expect(keyMismatch({ type: "rsa", modulusLength: 2048 }, 4096)).toBe(
      "the root key is RSA-2048, the configured key is RSA-4096",
    )
    expect(keyMismatch({ type: "ec" }, 2048)).toBe("the root key is ec, the configured key is RSA-2048")
  })
})

describe("bundleVersion and the phase gauge", () => {
  it("names a bundle by its text and maps phases to gauge values", () => {
    expect(bundleVersion("a")).toMatch(/^[0-9a-f]{16}$/)
    expect(bundleVersion("a")).toBe(bundleVersion("a"))
    expect(bundleVersion("a")).not.toBe(bundleVersion("b"))
    expect([phaseGaugeValue("idle"), phaseGaugeValue("publishing"), phaseGaugeValue("retaining")]).toEqual([0, 1, 2])
  })
})
