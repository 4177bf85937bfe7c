/** Parsing of the logging flags against a binary's scopes. */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { parseScopeLevels, resolveLogSettings } from "../../../src/services/logging/options.js"
import { agentScopes, cniScopes, discoveryScopes } from "../../../src/services/logging/scopes.js"

const raw = { asJson: false, caller: "", outputLevel: "", stackTraceLevel: "default:none", targets: [], vklog: 0 }

describe("parseScopeLevels", () => {
  const scopes = ["all", "default", "ads", "ca"]
  const base = { default: "info", ads: "info", ca: "info" } as const
  it("sets levels per scope, bare levels on default, all on every scope", () => {
    expect(parseScopeLevels("--f", "ads:debug,ca:error", scopes, base)).toEqual(
      Either.right({ default: "info", ads: "debug", ca: "error" }),
    )
    expect(parseScopeLevels("--f", "warn", scopes, base)).toEqual(
      Either.right({ default: "warn", ads: "info", ca: "info" }),
    )
    expect(parseScopeLevels("--f", "all:none,ads:debug", scopes, base)).toEqual(
      Either.right({ all: "none", default: "none", ads: "debug", ca: "none" }),
    )
  })
  it("names the flag, scope and level in errors", () => {
    expect(parseScopeLevels("--log_output_level", "xds:debug", scopes, base)).toEqual(
      Either.left('--log_output_level: unknown scope "xds" (known scopes: all, default, ads, ca)'),
    )
    expect(parseScopeLevels("--log_output_level", "ads:verbose", scopes, base)).toEqual(
      Either.left(
        '--log_output_level: unknown level "verbose" for scope "ads" (levels: debug, info, warn, error, fatal, none)',
      ),
    )
  })
})

describe("resolveLogSettings", () => {
  it("accepts exactly each binary's scopes", () => {
    expect(Either.isRight(resolveLogSettings({ ...raw, outputLevel: "xdsproxy:debug" }, agentScopes))).toBe(true)
    expect(Either.isLeft(resolveLogSettings({ ...raw, outputLevel: "xdsproxy:debug" }, discoveryScopes))).toBe(true)
    expect(Either.isRight(resolveLogSettings({ ...raw, outputLevel: "cni-plugin:debug" }, cniScopes))).toBe(true)
    expect(Either.isRight(resolveLogSettings({ ...raw, outputLevel: "ingress status:warn" }, discoveryScopes))).toBe(
      true,
    )
  })
  it("defaults every scope to info, stack traces to none, target to stdout", () => {
    const settings = Either.getOrThrow(resolveLogSettings(raw, discoveryScopes))
    expect(settings.outputLevels.ads).toBe("info")
    expect(settings.stackTraceLevels.ads).toBe("none")
    expect(settings.targets).toEqual(["stdout"])
  })
  it("resolves callers and klog verbosity", () => {
    const settings = Either.getOrThrow(resolveLogSettings({ ...raw, caller: "ads,ca", vklog: 4 }, discoveryScopes))
    expect(settings.callerScopes).toEqual(["ads", "ca"])
    expect(settings.outputLevels.klog).toBe("debug")
    expect(resolveLogSettings({ ...raw, caller: "nope" }, discoveryScopes)).toEqual(
      Either.left(expect.stringContaining('--log_caller: unknown scope "nope"')),
    )
  })
})
