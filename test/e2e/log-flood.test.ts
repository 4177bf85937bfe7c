/**
 * End-to-end: one client flooding the built `mesh-discovery` with refused requests (issue 34
 * item 4) — 200 NACKs of 16 KiB, debug requests over xDS with forged paths and a 3 MB query,
 * 150 invalid AdmissionReviews, 150 undecodable /inject bodies, 50 unknown debug pages — each
 * carrying a newline, a fake log line and ANSI escapes. The log stays a few KiB (it was 926 KB
 * for the same flood without the 3 MB query, and over 4 MB with it), no line is forged, no
 * escape reaches the reader, and every throttled line is accounted for by a "suppressed N"
 * summary, in console and JSON output alike. The same daemon's /envj/ hides a GITHUB_PAT.
 */
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { discoveryArgs, exampleMeshDir } from "../support/discovery.js"
import { type FloodCounts, FORGED_TIME, logFlood } from "../support/log-flood.js"
import { startDaemon } from "../support/processes.js"

const COUNTS: FloodCounts = {
  nacks: 200,
  nackBytes: 16 * 1024,
  debugPaths: 20,
  debugQueries: 1,
  debugQueryBytes: 3 * 1024 * 1024,
  validateRefusals: 150,
  injectDecodeErrors: 150,
  httpDebug: 50,
}

/** What the whole flood may cost in log bytes (the first line of each kind and the summaries). */
const MAX_FLOOD_LOG_BYTES = 16 * 1024
/** Longest line the flood may cause (a caller's value is cut to 256 bytes in it). */
const MAX_LINE_BYTES = 2 * 1024

const PAT = "ghp_logfloodtestsecretvalue0123456789"

/** Starts a daemon, floods it, stops it: the output the flood caused (summaries at exit included). */
const attack = async (asJson: boolean) => {
  const dir = exampleMeshDir("log-flood-")
  const daemon = startDaemon(
    "mesh-discovery",
    [...discoveryArgs(join(dir, "mesh")), ...(asJson ? ["--log_as_json"] : [])],
    { GITHUB_PAT: PAT },
    dir,
  )
  try {
    const port = async (pattern: RegExp) => Number((await daemon.waitFor(pattern, 30_000))[1])
    const ports = {
      grpc: await port(/ADS server listening on [\d.]+:(\d+)/),
      https: await port(/webhook HTTPS listener on [\d.]+:(\d+)/),
      monitoring: await port(/monitoring listening on [\d.]+:(\d+)/),
    }
    const ctrlz = await port(/introspection listening on [\d.]+:(\d+)/)
    const env = (await (await fetch(`http://127.0.0.1:${ctrlz}/envj/`)).json()) as Array<string>
    const before = daemon.output().length
    const result = await logFlood(ports, COUNTS)
    const during = daemon.output().slice(before)
    await daemon.stop()
    return { result, during, all: daemon.output().slice(before), env }
  } finally {
    await daemon.stop()
  }
}

/** Whether `text` holds a C0 or C1 control character or DEL. */
const hasControlCharacter = (text: string) =>
  Array.from(text).some((c) => {
    const code = c.charCodeAt(0)
    return code < 0x20 || (code >= 0x7f && code <= 0x9f)
  })

/** The sum of the counts in summaries of `reason`. */
const suppressedOf = (lines: ReadonlyArray<string>, reason: string) =>
  lines
    .map((line) => line.match(new RegExp(`suppressed (\\d+) similar lines? in the last [\\d.]+s: ${reason}`)))
    .reduce((sum, match) => sum + (match === null ? 0 : Number(match[1])), 0)

const checkFlood = (run: Awaited<ReturnType<typeof attack>>, messageOf: (line: string) => string) => {
  const { result, during, all } = run
  // The flood reached every log site: refused, counted, answered.
  expect(result.nacksCounted).toBeGreaterThanOrEqual(COUNTS.nacks / 2)
  expect(result.debugStatuses).toEqual(Array(COUNTS.debugPaths + COUNTS.debugQueries).fill(3))
  expect(result.validateStatuses).toEqual(Array(COUNTS.validateRefusals).fill(200))
  expect(result.injectStatuses.every((status) => status > 0)).toBe(true)
  expect(result.httpStatuses).toEqual(Array(COUNTS.httpDebug).fill(404))

  expect(Buffer.byteLength(during)).toBeLessThan(MAX_FLOOD_LOG_BYTES)
  expect(Buffer.byteLength(all)).toBeLessThan(MAX_FLOOD_LOG_BYTES)
  expect(all).not.toContain("\u001b")
  expect(all).not.toContain("\u009b")
  const lines = all.split("\n").filter((line) => line !== "")
  for (const line of lines) {
    expect(line.startsWith(FORGED_TIME), line).toBe(false)
    expect(line.startsWith("FORGED"), line).toBe(false)
    expect(Buffer.byteLength(line), line.slice(0, 200)).toBeLessThan(MAX_LINE_BYTES)
  }
  const messages = lines.map(messageOf)
  // Every throttled line is either written or counted in a summary.
  const nackLines = messages.filter((m) => m.startsWith("CDS: ACK ERROR")).length
  expect(nackLines).toBeGreaterThanOrEqual(1)
  expect(nackLines + suppressedOf(messages, "NACK of cds")).toBe(result.nacksCounted)
  const refusedLines = messages.filter((m) => m.startsWith("validation webhook refused")).length
  expect(refusedLines + suppressedOf(messages, "validation webhook refused")).toBe(COUNTS.validateRefusals)
  const injectLines = messages.filter((m) => m.startsWith("sidecar injection failed")).length
  expect(
    injectLines +
      suppressedOf(messages, "sidecar injection denied") +
      suppressedOf(messages, "sidecar injection request refused"),
  ).toBe(COUNTS.injectDecodeErrors)
  // The caller's values are cut with their length.
  expect(messages.find((m) => m.startsWith("validation webhook refused"))).toMatch(/…\[cut, \d+ bytes\]$/)
  return messages
}

describe("a log flood from one client against mesh-discovery", () => {
  it("costs a few KiB of console log, forges no line and ends in suppressed-N summaries", async () => {
    const run = await attack(false)
    // console: time, level, [scope,] message[, fields] — the message is the column after the level or scope
    const messages = checkFlood(run, (line) => {
      const columns = line.split("\t")
      return /^[A-Za-z]+$/.test(columns[2] ?? "") && columns.length > 3
        ? columns.slice(3).join("\t")
        : columns.slice(2).join("\t")
    })
    expect(messages.some((m) => m.includes("\\n2026-01-01T00:00:00.000Z\\tinfo\\tFORGED-NODE \\u001b[31m"))).toBe(true)
    // /envj/ of the same daemon: a personal access token is redacted (issue 34 item 11)
    expect(run.env).toContain("GITHUB_PAT=<redacted>")
    expect(run.env.join("\n")).not.toContain(PAT)
  }, 120_000)

  it("does the same in JSON lines, each a valid object whose values hold no control character", async () => {
    const run = await attack(true)
    const messages = checkFlood(run, (line) => {
      const parsed = JSON.parse(line) as { msg: string }
      for (const value of Object.values(parsed))
        if (typeof value === "string") expect(hasControlCharacter(value), value.slice(0, 200)).toBe(false)
      return parsed.msg
    })
    expect(messages.some((m) => m.includes("FORGED-NACK \\u001b[31m"))).toBe(true)
  }, 120_000)
})
