/** Console and JSON lines: a caller's text can neither add a line nor make one unbounded. */
import { describe, expect, it } from "vitest"
import { formatLogLine, type LogRecord } from "../../../src/services/logging/log-format.js"
import { MAX_FIELD_BYTES, MAX_MESSAGE_BYTES } from "../../../src/services/logging/log-text.js"

const ESC = "\u001b"
const FORGED = `x\n2026-01-01T00:00:00.000Z\tinfo\tFORGED ${ESC}[31mred${ESC}[0m`
const time = new Date("2026-05-01T10:00:00.000Z")
const record = (overrides: Partial<LogRecord> = {}): LogRecord => ({
  time,
  level: "warn",
  scope: "ads",
  message: `CDS: ACK ERROR ${FORGED}`,
  fields: [["node", FORGED]],
  ...overrides,
})

describe("formatLogLine", () => {
  it("writes one console line for a message and fields holding newlines, tabs and ANSI escapes", () => {
    const line = formatLogLine(record(), false)
    expect(line.endsWith("\n")).toBe(true)
    expect(line.slice(0, -1)).not.toContain("\n")
    expect(line).not.toContain(ESC)
    expect(line).toBe(
      "2026-05-01T10:00:00.000Z\twarn\tads\tCDS: ACK ERROR x\\n2026-01-01T00:00:00.000Z\\tinfo\\tFORGED \\u001b[31mred\\u001b[0m" +
        "\tnode=x\\n2026-01-01T00:00:00.000Z\\tinfo\\tFORGED \\u001b[31mred\\u001b[0m\n",
    )
  })

  it("writes JSON whose decoded values hold the same escapes, not the raw characters", () => {
    const line = formatLogLine(
      record({
        fields: [
          ["node", FORGED],
          ["count", 3],
        ],
      }),
      true,
    )
    expect(line.slice(0, -1)).not.toContain("\n")
    const parsed = JSON.parse(line)
    expect(parsed.msg).toBe(`CDS: ACK ERROR x\\n2026-01-01T00:00:00.000Z\\tinfo\\tFORGED \\u001b[31mred\\u001b[0m`)
    expect(parsed.node).not.toContain(ESC)
    expect(parsed.node).not.toContain("\n")
    expect(parsed.count).toBe(3)
  })

  it("bounds the message and every field, naming the original length", () => {
    const huge = "q".repeat(3 * 1024 * 1024)
    for (const asJson of [false, true]) {
      const line = formatLogLine(record({ message: huge, fields: [["query", huge]] }), asJson)
      expect(Buffer.byteLength(line)).toBeLessThan(MAX_MESSAGE_BYTES + MAX_FIELD_BYTES + 256)
      expect(line.match(/…\[cut, 3145728 bytes\]/g)).toHaveLength(2)
    }
  })

  it("keeps a stack's lines below the console line, none of them at the start of a line", () => {
    const line = formatLogLine(
      record({ message: "push failed", fields: [], stack: `Error: ${FORGED}\n    at f` }),
      false,
    )
    const lines = line.trimEnd().split("\n")
    expect(lines[0]).toBe("2026-05-01T10:00:00.000Z\twarn\tads\tpush failed")
    for (const below of lines.slice(1)) expect(below).toMatch(/^[\t ]/)
    expect(line).not.toContain(ESC)
  })

  it("keeps plain objects as JSON fields, and bounds large ones as text", () => {
    const small = JSON.parse(formatLogLine(record({ fields: [["labels", { a: "b" }]] }), true))
    expect(small.labels).toEqual({ a: "b" })
    const large = JSON.parse(formatLogLine(record({ fields: [["labels", { a: "b".repeat(5000) }]] }), true))
    expect(typeof large.labels).toBe("string")
    expect(large.labels).toMatch(/…\[cut, 5008 bytes\]$/)
  })
})
