import { Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  cgroupLimitBytes,
  nextGrowthPercent,
  PRESSURE_GROWTH_PERCENT,
  parseMemoryQuantity,
  resolveSoftLimit,
} from "../../../src/services/memory/heap-growth.js"

const MiB = 2 ** 20

describe("parseMemoryQuantity", () => {
  it("reads the orchestrator's notations and plain bytes", () => {
    expect(parseMemoryQuantity("536870912")).toEqual(Either.right(536870912))
    expect(parseMemoryQuantity("512Mi")).toEqual(Either.right(512 * MiB))
    expect(parseMemoryQuantity("1.5Gi")).toEqual(Either.right(1.5 * 2 ** 30))
    expect(parseMemoryQuantity("2G")).toEqual(Either.right(2e9))
    expect(parseMemoryQuantity(" 64k ")).toEqual(Either.right(64_000))
    expect(parseMemoryQuantity("0")).toEqual(Either.right(0))
  })
  it("refuses anything else, naming what it got", () => {
    for (const bad of ["", "-1", "512MB", "Mi", "1e9", "lots"]) {
      const parsed = parseMemoryQuantity(bad)
      expect(Either.isLeft(parsed), bad).toBe(true)
      if (Either.isLeft(parsed)) expect(parsed.left).toContain("not a memory size")
    }
  })
})

describe("cgroupLimitBytes", () => {
  it("reads v2's bytes and v1's bytes", () => {
    expect(cgroupLimitBytes("268435456\n")).toBe(256 * MiB)
  })
  it("treats max, v1's no-limit value, junk and a missing file as no limit", () => {
    expect(cgroupLimitBytes("max\n")).toBeUndefined()
    expect(cgroupLimitBytes("9223372036854771712\n")).toBeUndefined()
    expect(cgroupLimitBytes("garbage")).toBeUndefined()
    expect(cgroupLimitBytes(undefined)).toBeUndefined()
  })
})

describe("resolveSoftLimit", () => {
  it("takes the setting over the cgroup, and 0 as none", () => {
    expect(resolveSoftLimit({ setting: "300Mi", cgroupBytes: 1000 * MiB })).toEqual(
      Either.right({ bytes: 300 * MiB, source: "MESH_MEMORY_LIMIT" }),
    )
    const none = resolveSoftLimit({ setting: "0", cgroupBytes: 1000 * MiB })
    expect(Either.getOrThrow(none).bytes).toBeUndefined()
  })
  it("uses 90% of the cgroup's limit when unset, and none without one", () => {
    expect(Either.getOrThrow(resolveSoftLimit({ setting: "", cgroupBytes: 1000 * MiB })).bytes).toBe(
      Math.floor(900 * MiB),
    )
    expect(Either.getOrThrow(resolveSoftLimit({ setting: "", cgroupBytes: undefined })).bytes).toBeUndefined()
  })
  it("fails on a bad setting", () => {
    expect(Either.isLeft(resolveSoftLimit({ setting: "half", cgroupBytes: undefined }))).toBe(true)
  })
})

describe("nextGrowthPercent", () => {
  const limit = 400 * MiB
  const at = (rssMiB: number, currentPercent: number, configuredPercent = 100) =>
    nextGrowthPercent({ rssBytes: rssMiB * MiB, softLimitBytes: limit, configuredPercent, currentPercent })

  it("keeps the configured factor without a limit, whatever RSS is", () => {
    expect(
      nextGrowthPercent({
        rssBytes: 10 * limit,
        softLimitBytes: undefined,
        configuredPercent: 100,
        currentPercent: 100,
      }),
    ).toBe(100)
  })
  it("drops to the pressure factor over the limit", () => {
    expect(at(399, 100)).toBe(100)
    expect(at(401, 100)).toBe(PRESSURE_GROWTH_PERCENT)
  })
  it("returns to the configured factor only once RSS is 10% under the limit", () => {
    expect(at(380, PRESSURE_GROWTH_PERCENT)).toBe(PRESSURE_GROWTH_PERCENT)
    expect(at(359, PRESSURE_GROWTH_PERCENT)).toBe(100)
  })
  it("never raises a factor already below the pressure one, and lowers V8's own (0)", () => {
    expect(at(500, 5, 5)).toBe(5)
    expect(at(500, 0, 0)).toBe(PRESSURE_GROWTH_PERCENT)
    expect(at(100, PRESSURE_GROWTH_PERCENT, 0)).toBe(0)
  })
})
