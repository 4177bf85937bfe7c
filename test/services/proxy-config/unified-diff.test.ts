import { describe, expect, it } from "vitest"
import { diffLines, unifiedDiff } from "../../../src/services/proxy-config/unified-diff.js"

const names = { from: "a", to: "b" }
const lines = (n: number, prefix = "line") => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`)

/** Applies an edit script's kept and added lines: it must rebuild b. */
const rebuilt = (ops: ReturnType<typeof diffLines>) => ops.filter((o) => o.kind !== "-").map((o) => o.line)
const original = (ops: ReturnType<typeof diffLines>) => ops.filter((o) => o.kind !== "+").map((o) => o.line)

describe("diffLines", () => {
  it("turns a into b with the fewest changes", () => {
    const a = ["a", "b", "c", "a", "b", "b", "a"]
    const b = ["c", "b", "a", "b", "a", "c"]
    const ops = diffLines(a, b)
    expect(original(ops)).toEqual(a)
    expect(rebuilt(ops)).toEqual(b)
    // The classic example: the shortest script has 5 edits.
    expect(ops.filter((o) => o.kind !== " ")).toHaveLength(5)
  })

  it("handles empty sides", () => {
    expect(diffLines([], ["x"])).toEqual([{ kind: "+", line: "x" }])
    expect(diffLines(["x"], [])).toEqual([{ kind: "-", line: "x" }])
    expect(diffLines([], [])).toEqual([])
  })
})

describe("unifiedDiff", () => {
  it("is empty for equal texts", () => {
    expect(unifiedDiff("x\ny\n", "x\ny", names)).toBe("")
  })

  it("prints one hunk with context and 1-based ranges", () => {
    const a = lines(10).join("\n")
    const b = lines(10)
      .map((l) => (l === "line 5" ? "line five" : l))
      .join("\n")
    expect(unifiedDiff(a, b, names, 2)).toBe(
      [
        "--- a",
        "+++ b",
        "@@ -3,5 +3,5 @@",
        " line 3",
        " line 4",
        "-line 5",
        "+line five",
        " line 6",
        " line 7",
        "",
      ].join("\n"),
    )
  })

  it("splits distant changes into hunks and joins near ones", () => {
    const a = lines(30)
    const far = a.map((l) => (l === "line 2" || l === "line 25" ? `${l}!` : l))
    expect(unifiedDiff(a.join("\n"), far.join("\n"), names, 3).match(/^@@/gm)).toHaveLength(2)
    const near = a.map((l) => (l === "line 2" || l === "line 8" ? `${l}!` : l))
    expect(unifiedDiff(a.join("\n"), near.join("\n"), names, 3).match(/^@@/gm)).toHaveLength(1)
  })

  it("writes an empty side's range as start,0", () => {
    expect(unifiedDiff("", "new", names)).toBe("--- a\n+++ b\n@@ -0,0 +1 @@\n+new\n")
    expect(unifiedDiff("a\nb", "a", names)).toBe("--- a\n+++ b\n@@ -1,2 +1 @@\n a\n-b\n")
  })
})
