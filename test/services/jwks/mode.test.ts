import { describe, expect, it } from "vitest"
import { parseJwksMode } from "../../../src/services/jwks/mode.js"

describe("PILOT_JWT_ENABLE_REMOTE_JWKS", () => {
  it.each([
    ["false", "server"],
    ["meshd", "server"],
    ["istiod", "server"],
    ["", "server"],
    ["true", "hybrid"],
    ["hybrid", "hybrid"],
    ["HYBRID", "hybrid"],
    ["proxy", "proxy"],
    ["envoy", "proxy"],
    [" Proxy ", "proxy"],
  ])("reads %j as %s without error", (value, mode) => {
    expect(parseJwksMode(value)).toEqual({ mode })
  })

  it.each(["yes", "remote", "constructor", "1"])("falls back to the server for %j and says why", (value) => {
    const parsed = parseJwksMode(value)
    expect(parsed.mode).toBe("server")
    expect(parsed.error).toContain(`PILOT_JWT_ENABLE_REMOTE_JWKS="${value}"`)
  })
})
