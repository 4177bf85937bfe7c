/** What a log line may hold: control characters escaped, caller values cut with their length. */
import { describe, expect, it } from "vitest"
import {
  boundedBlock,
  boundedText,
  callerText,
  escapeBlock,
  escapeControl,
  MAX_CALLER_VALUE_BYTES,
} from "../../../src/services/logging/log-text.js"

const ESC = "\u001b"

describe("escapeControl", () => {
  it("writes newlines, tabs, ANSI escapes and other controls as escapes, on one line", () => {
    expect(escapeControl(`a\nb\r\tc${ESC}[31md\u0000e\u007f`)).toBe("a\\nb\\r\\tc\\u001b[31md\\u0000e\\u007f")
    // C1 controls (U+009B is a one-character CSI), line separators, bidi overrides
    expect(escapeControl("x\u009b2Jy\u2028z\u202eq\u2066")).toBe("x\\u009b2Jy\\u2028z\\u202eq\\u2066")
  })

  it("leaves ordinary text alone, including non-ASCII letters", () => {
    const text = "pushed 3 clusters to sidecar~10.0.0.1~reviews-v1.default~default.svc.cluster.local — ünïcødé 名前"
    expect(escapeControl(text)).toBe(text)
  })
})

describe("escapeBlock", () => {
  it("keeps a stack's lines but indents every line that could pass for a log line", () => {
    expect(escapeBlock(`Error: boom\n2026-01-01T00:00:00.000Z\tinfo\tforged${ESC}[0m\n    at f`)).toBe(
      "\tError: boom\n\t2026-01-01T00:00:00.000Z\\tinfo\\tforged\\u001b[0m\n    at f",
    )
  })
})

describe("boundedText", () => {
  it("keeps a short text as it is", () => {
    expect(boundedText("node=a", 16)).toBe("node=a")
  })

  it("cuts a 3 MB value to the bound and says how long it was", () => {
    const huge = "q".repeat(3 * 1024 * 1024)
    const cut = callerText(huge)
    expect(cut).toBe(`${"q".repeat(MAX_CALLER_VALUE_BYTES)}…[cut, 3145728 bytes]`)
  })

  it("counts UTF-8 bytes and never splits a character", () => {
    // "é" is 2 bytes: 5 of them do not fit in 9 bytes, 4 do.
    expect(boundedText("ééééé", 9)).toBe("éééé…[cut, 10 bytes]")
    // a 4-byte character (a surrogate pair) is kept whole or left out
    expect(boundedText("ab😀cd", 4)).toBe("ab…[cut, 8 bytes]")
    expect(boundedText("😀😀", 4)).toBe("😀…[cut, 8 bytes]")
  })

  it("bounds the escaped text, so escapes cannot lengthen a line past the bound", () => {
    const ansi = `${ESC}[2J`.repeat(100)
    const out = boundedText(ansi, 64)
    expect(out).not.toContain(ESC)
    expect(Buffer.byteLength(out.split("…[cut")[0]!)).toBeLessThanOrEqual(64)
    expect(out).toMatch(/…\[cut, 400 bytes\]$/)
  })

  it("escapes a short text with control characters without cutting it", () => {
    expect(boundedText(`a\nb`, 16)).toBe("a\\nb")
  })
})

describe("boundedBlock", () => {
  it("cuts a long stack and escapes it", () => {
    const stack = `Error: ${"x".repeat(100)}\n    at f`
    const out = boundedBlock(stack, 32)
    expect(out.startsWith("\tError: ")).toBe(true)
    expect(out).toMatch(/…\[cut, 116 bytes\]$/)
  })
})
