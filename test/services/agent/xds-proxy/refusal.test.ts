/** Which upstream statuses the xDS proxy passes downstream, and the "log once per cause" rule. */
import { status } from "@grpc/grpc-js"
import { describe, expect, it } from "vitest"
import { causeKey, causeToLog, isRefusal } from "../../../../src/services/agent/xds-proxy/refusal.js"

describe("isRefusal", () => {
  it("passes refusals through and bridges everything else", () => {
    expect(isRefusal(status.PERMISSION_DENIED)).toBe(true)
    expect(isRefusal(status.UNAUTHENTICATED)).toBe(true)
    expect(isRefusal(status.INVALID_ARGUMENT)).toBe(true)
    expect(isRefusal(status.UNAVAILABLE)).toBe(false)
    expect(isRefusal(status.CANCELLED)).toBe(false)
    expect(isRefusal(undefined)).toBe(false)
  })
})

describe("causeKey and causeToLog", () => {
  it("names the status and ignores the timestamps gRPC adds to connection errors", () => {
    const at = (t: string) =>
      causeKey(status.UNAVAILABLE, `No connection established. Last error: connect ECONNREFUSED 127.0.0.1:15010 (${t})`)
    expect(at("2025-01-01T00:00:00.000Z")).toBe(at("2025-01-01T00:00:05.120Z"))
    expect(at("2025-01-01T00:00:00.000Z")).toBe(
      "UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED 127.0.0.1:15010",
    )
    expect(causeKey(undefined, undefined)).toBe("ended: ")
  })

  it("logs a cause once, again when it changes or after a recovery", () => {
    const a = causeKey(status.PERMISSION_DENIED, "no")
    const b = causeKey(status.UNAUTHENTICATED, "token expired")
    let last: string | undefined
    const decisions: Array<boolean> = []
    for (const key of [a, a, a, b, b, a]) {
      const [log, next] = causeToLog(last, key)
      decisions.push(log)
      last = next
    }
    expect(decisions).toEqual([true, false, false, true, false, true])
    // a stream that answered clears the memory
    expect(causeToLog(undefined, a)[0]).toBe(true)
  })
})
