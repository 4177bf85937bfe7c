import { describe, expect, it } from "vitest"
import { parseLevels, scopeChanges, scopeTable } from "../../../../src/programs/meshctl/diagnostics/admin-log-levels.js"

const scopes = ["ads", "model", "default"].map((name) => ({
  name,
  description: "",
  output_level: "info",
  stack_trace_level: "none",
}))

describe("admin log levels", () => {
  it("parses scope:level lists, a bare level meaning every scope", () => {
    expect(parseLevels("--level", "ads:debug, model:warn")).toEqual([
      { scope: "ads", level: "debug" },
      { scope: "model", level: "warn" },
    ])
    expect(parseLevels("--level", "error")).toEqual([{ scope: "", level: "error" }])
    expect(parseLevels("--level", "all:none")).toEqual([{ scope: "", level: "none" }])
    expect(parseLevels("--level", "ads:trace")).toContain('unknown level "trace"')
  })

  it("turns --reset, --level and --stack-trace-level into one change per scope", () => {
    const changes = scopeChanges(scopes, {
      reset: true,
      levels: [{ scope: "ads", level: "debug" }],
      stackTraceLevels: [{ scope: "", level: "error" }],
    })
    expect(changes.get("ads")).toEqual({ output_level: "debug", stack_trace_level: "error" })
    expect(changes.get("model")).toEqual({ output_level: "info", stack_trace_level: "error" })
    expect(scopeChanges(scopes, { reset: false, levels: [], stackTraceLevels: [] }).size).toBe(0)
  })

  it("prints the short table sorted by scope", () => {
    expect(
      scopeTable(scopes)
        .split("\n")
        .map((l) => l.split(/\s{3,}/)[0]),
    ).toEqual(["ACTIVE SCOPE", "ads", "default", "model"])
  })
})
