import { describe, expect, it } from "vitest"
import {
  kubeletSupportsNativeSidecars,
  type NodeVersions,
  nativeSidecarDefault,
  parseNativeSidecarMode,
} from "../../../src/services/injection/native-sidecars.js"

const nodes = (versions: Record<string, string>): NodeVersions => ({
  version: (name) => versions[name],
  all: () => Object.values(versions),
})

describe("native sidecars by default", () => {
  it("reads ENABLE_NATIVE_SIDECARS as the reference does: auto unless exactly true or false", () => {
    expect(parseNativeSidecarMode(undefined)).toEqual({ mode: "auto", warning: undefined })
    expect(parseNativeSidecarMode("")).toEqual({ mode: "auto", warning: undefined })
    expect(parseNativeSidecarMode("true").mode).toBe("enabled")
    expect(parseNativeSidecarMode("false").mode).toBe("disabled")
    const odd = parseNativeSidecarMode("1")
    expect(odd.mode).toBe("disabled")
    expect(odd.warning).toContain("ENABLE_NATIVE_SIDECARS")
  })

  it("needs a kubelet of at least 1.33", () => {
    expect(kubeletSupportsNativeSidecars("v1.33.0")).toBe(true)
    expect(kubeletSupportsNativeSidecars("1.40.2-gke.100")).toBe(true)
    expect(kubeletSupportsNativeSidecars("v1.32.9")).toBe(false)
    expect(kubeletSupportsNativeSidecars("v1.3")).toBe(false)
    expect(kubeletSupportsNativeSidecars("")).toBe(false)
    expect(kubeletSupportsNativeSidecars("unknown")).toBe(false)
  })

  it("true and false ignore the nodes", () => {
    expect(nativeSidecarDefault("enabled", undefined, "")).toBe(true)
    expect(nativeSidecarDefault("disabled", nodes({ a: "v1.34.0" }), "a")).toBe(false)
  })

  it("auto asks the pod's node, else every node, and is off without nodes", () => {
    const mixed = nodes({ old: "v1.31.0", new: "v1.33.2" })
    expect(nativeSidecarDefault("auto", mixed, "new")).toBe(true)
    expect(nativeSidecarDefault("auto", mixed, "old")).toBe(false)
    expect(nativeSidecarDefault("auto", mixed, "")).toBe(false)
    expect(nativeSidecarDefault("auto", mixed, "missing")).toBe(false)
    expect(nativeSidecarDefault("auto", nodes({ a: "v1.33.0", b: "v1.34.1" }), "")).toBe(true)
    expect(nativeSidecarDefault("auto", nodes({}), "")).toBe(false)
    expect(nativeSidecarDefault("auto", undefined, "a")).toBe(false)
  })
})
