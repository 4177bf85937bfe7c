import { describe, expect, it } from "@effect/vitest"
import { Duration } from "effect"
import {
  effectivePercentile,
  initialDelayMs,
  liveRetiredRoots,
  rotationEnabled,
  rotationWaitMs,
  shouldRotate,
} from "../../../src/services/ca/rotation.js"

const H = 3_600_000
const root = { notBefore: new Date(0), notAfter: new Date(100 * H) }

describe("root rotation rule 7", () => {
  it("waits until the remaining lifetime enters the grace period", () => {
    expect(rotationWaitMs(root, 0, 20)).toBe(80 * H)
    expect(rotationWaitMs(root, 79 * H, 20)).toBe(H)
    expect(shouldRotate(root, 79 * H, 20)).toBe(false)
    expect(shouldRotate(root, 80 * H, 20)).toBe(true)
    expect(shouldRotate(root, 200 * H, 20)).toBe(true)
  })

  it("falls back to 20 percent for a percentile outside 0..100", () => {
    expect(effectivePercentile(-1)).toBe(20)
    expect(effectivePercentile(101)).toBe(20)
    expect(effectivePercentile(50)).toBe(50)
    expect(shouldRotate(root, 60 * H, 150)).toBe(false)
  })

  it("is disabled by a check interval of zero or less", () => {
    expect(rotationEnabled({ checkInterval: Duration.zero, gracePeriodPercentile: 20, enableJitter: false })).toBe(
      false,
    )
    expect(rotationEnabled({ checkInterval: Duration.hours(1), gracePeriodPercentile: 20, enableJitter: false })).toBe(
      true,
    )
  })

  it("starts after a random delay shorter than the interval with jitter, at once without", () => {
    const settings = { checkInterval: Duration.hours(1), gracePeriodPercentile: 20, enableJitter: true }
    expect(initialDelayMs(settings, 0.5)).toBe(H / 2)
    expect(initialDelayMs(settings, 0.999999)).toBeLessThan(H)
    expect(initialDelayMs({ ...settings, enableJitter: false }, 0.5)).toBe(0)
  })

  it("keeps a retired root only while certificates it signed may live", () => {
    const retired = [
      { cert: "a", retainUntilMs: 10 },
      { cert: "b", retainUntilMs: 20 },
    ]
    expect(liveRetiredRoots(retired, 15).map((r) => r.cert)).toEqual(["b"])
  })
})
