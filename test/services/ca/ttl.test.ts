import { describe, expect, it } from "@effect/vitest"
import { Duration, Either } from "effect"
import { resolveTtl, validityWindow } from "../../../src/services/ca/ttl.js"

const policy = { defaultTtl: Duration.hours(24), maxTtl: Duration.hours(2160) }

describe("TTL rule 8", () => {
  it("uses the requested TTL", () => {
    expect(resolveTtl(3600, policy)).toEqual(Either.right(Duration.seconds(3600)))
    expect(resolveTtl(2160 * 3600, policy)).toEqual(Either.right(Duration.seconds(2160 * 3600)))
  })

  it("gives DEFAULT_WORKLOAD_CERT_TTL for a non-positive request", () => {
    expect(resolveTtl(0, policy)).toEqual(Either.right(Duration.hours(24)))
    expect(resolveTtl(-5, policy)).toEqual(Either.right(Duration.hours(24)))
  })

  it("refuses a TTL above MAX_WORKLOAD_CERT_TTL with the reference's message", () => {
    const result = resolveTtl(2160 * 3600 + 1, policy)
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(result.left.type).toBe("TTL_ERROR")
      expect(result.left.reason).toBe("requested TTL 2160h0m1s is greater than the max allowed TTL 2160h0m0s")
    }
  })

  it("never issues beyond the signing chain's expiry", () => {
    const now = Date.UTC(2026, 0, 1)
    const { notBefore, notAfter } = validityWindow(now, Duration.hours(24), [now + 3_600_000, now + 10 * 3_600_000])
    expect(notBefore.getTime()).toBe(now)
    expect(notAfter.getTime()).toBe(now + 3_600_000)
  })

  it("keeps whole seconds and the exact TTL when the chain allows it", () => {
    const now = Date.UTC(2026, 0, 1) + 123
    const { notBefore, notAfter } = validityWindow(now, Duration.seconds(90), [now + 86_400_000])
    expect(notAfter.getTime() - notBefore.getTime()).toBe(90_000)
    expect(notBefore.getTime() % 1000).toBe(0)
  })
})
