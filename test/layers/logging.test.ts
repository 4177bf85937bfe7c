/**
 * The logger: scope filtering, console and JSON formats, file targets, run-time level changes,
 * and what a caller's text and repeats can do to it (issue 34 item 4): nothing but one bounded,
 * escaped line, and for throttled lines a first line and a summary per interval.
 */
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Either, TestClock } from "effect"
import { layer as loggingLayer } from "../../src/layers/logging.js"
import { Logging, throttled, withScope } from "../../src/services/logging/logging.js"
import { resolveLogSettings } from "../../src/services/logging/options.js"
import { discoveryScopes } from "../../src/services/logging/scopes.js"

const settingsFor = (target: string, overrides: Partial<Parameters<typeof resolveLogSettings>[0]> = {}) =>
  Either.getOrThrow(
    resolveLogSettings(
      {
        asJson: false,
        caller: "",
        outputLevel: "",
        stackTraceLevel: "default:none",
        targets: [target],
        vklog: 0,
        ...overrides,
      },
      discoveryScopes,
    ),
  )

const logFile = () => join(mkdtempSync(join(tmpdir(), "mesh-log-")), "nested", "mesh.log")

describe("loggingLayer", () => {
  it.effect("filters per scope and writes console lines with time, level, scope and fields", () =>
    Effect.gen(function* () {
      const file = logFile()
      yield* Effect.gen(function* () {
        yield* Effect.logDebug("hidden at info").pipe(withScope("ads"))
        yield* Effect.logInfo("pushed").pipe(withScope("ads"), Effect.annotateLogs("connections", 3))
        yield* Effect.logDebug("shown at debug").pipe(withScope("ca"))
        yield* Effect.logWarning("plain")
      }).pipe(Effect.provide(loggingLayer(settingsFor(file, { outputLevel: "ca:debug" }), discoveryScopes)))
      const lines = readFileSync(file, "utf8").trimEnd().split("\n")
      expect(lines).toHaveLength(3)
      expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z\tinfo\tads\tpushed\tconnections=3$/)
      expect(lines[1]).toMatch(/\tdebug\tca\tshown at debug$/)
      expect(lines[2]).toMatch(/\twarn\tplain$/)
    }),
  )

  it.effect("writes JSON lines with caller spans and stack traces where asked", () =>
    Effect.gen(function* () {
      const file = logFile()
      const work = Effect.fn("Pusher.push")(function* () {
        yield* Effect.logError("failed push").pipe(withScope("ads"))
      })
      yield* work().pipe(
        Effect.provide(
          loggingLayer(
            settingsFor(file, { asJson: true, caller: "ads", stackTraceLevel: "ads:error" }),
            discoveryScopes,
          ),
        ),
      )
      const line = JSON.parse(readFileSync(file, "utf8").trim())
      expect(line).toMatchObject({ level: "error", scope: "ads", msg: "failed push", caller: "Pusher.push" })
      expect(line.stack).toContain("at Pusher.push")
    }),
  )

  it.effect("changes levels at run time and rejects unknown scopes", () =>
    Effect.gen(function* () {
      const file = logFile()
      yield* Effect.gen(function* () {
        const logging = yield* Logging
        yield* Effect.logDebug("before").pipe(withScope("ads"))
        const updated = yield* logging.updateScope("ads", { outputLevel: "debug" })
        expect(updated.outputLevel).toBe("debug")
        yield* Effect.logDebug("after").pipe(withScope("ads"))
        const error = yield* Effect.flip(logging.updateScope("nope", { outputLevel: "debug" }))
        expect(error._tag).toBe("UnknownScopeError")
        yield* logging.updateScope("ads", { outputLevel: "none" })
        yield* Effect.logError("silenced").pipe(withScope("ads"))
      }).pipe(Effect.provide(loggingLayer(settingsFor(file), discoveryScopes)))
      const text = readFileSync(file, "utf8")
      expect(text).not.toContain("before")
      expect(text).toContain("after")
      expect(text).not.toContain("silenced")
    }),
  )

  it.effect("throttles lines marked throttled(reason) per scope, level and reason, and summarises the rest", () =>
    Effect.gen(function* () {
      const file = logFile()
      yield* Effect.gen(function* () {
        for (let i = 0; i < 500; i++)
          yield* Effect.logInfo(`request ${i} refused`).pipe(withScope("ads"), throttled("request refused"))
        // another reason, another scope: each has its own first line
        yield* Effect.logWarning("NACK 1").pipe(withScope("ads"), throttled("nack"))
        yield* Effect.logWarning("NACK 2").pipe(withScope("ads"), throttled("nack"))
        yield* Effect.logInfo("webhook refused 1").pipe(withScope("ca"), throttled("request refused"))
        // unmarked lines are never thinned
        yield* Effect.logInfo("plain 1")
        yield* Effect.logInfo("plain 1")
        yield* TestClock.adjust("10 seconds")
        // a new interval began for the keys that swallowed lines: a repeat is counted
        yield* Effect.logInfo("request 500 refused").pipe(withScope("ads"), throttled("request refused"))
        yield* TestClock.adjust("10 seconds")
        // a quiet interval forgets the key: the next line is written at once
        yield* TestClock.adjust("10 seconds")
        yield* Effect.logInfo("request 501 refused").pipe(withScope("ads"), throttled("request refused"))
        yield* Effect.logInfo("request 502 refused").pipe(withScope("ads"), throttled("request refused"))
        // counted lines are summarised when the logger closes
      }).pipe(Effect.provide(loggingLayer(settingsFor(file), discoveryScopes)))
      const lines = readFileSync(file, "utf8")
        .trimEnd()
        .split("\n")
        .map((line) => line.split("\t").slice(1).join("\t"))
      expect(lines).toEqual([
        "info\tads\trequest 0 refused",
        "warn\tads\tNACK 1",
        "info\tca\twebhook refused 1",
        "info\tplain 1",
        "info\tplain 1",
        "info\tads\tsuppressed 499 similar lines in the last 10s: request refused\tsuppressed=499",
        "warn\tads\tsuppressed 1 similar line in the last 10s: nack\tsuppressed=1",
        "info\tads\tsuppressed 1 similar line in the last 10s: request refused\tsuppressed=1",
        "info\tads\trequest 501 refused",
        "info\tads\tsuppressed 1 similar line in the last 0s: request refused\tsuppressed=1",
      ])
    }),
  )

  // One logger per test: a second layer provided in the same fiber would log beside the first.
  for (const asJson of [false, true])
    it.effect(`bounds and escapes what a caller sends (${asJson ? "JSON" : "console"})`, () =>
      Effect.gen(function* () {
        const nodeId = "sidecar~10.0.0.1~evil\n2026-01-01T00:00:00.000Z\tinfo\tFORGED\u001b[31m~cluster.local"
        const query = "q".repeat(3 * 1024 * 1024)
        const file = logFile()
        yield* Effect.gen(function* () {
          yield* Effect.logInfo(`ADS: new connection node=${nodeId}`).pipe(withScope("ads"))
          yield* Effect.logInfo(`debug request refused: ${query}`).pipe(Effect.annotateLogs("query", query))
          yield* Effect.logError("failed", Cause.fail(new Error(`bad\n2026-01-01T00:00:00.000Z\tinfo\tFORGED2`)))
        }).pipe(Effect.provide(loggingLayer(settingsFor(file, { asJson }), discoveryScopes)))
        const text = readFileSync(file, "utf8")
        expect(text).not.toContain("\u001b")
        expect(text).not.toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z\tinfo\tFORGED/m)
        expect(text).not.toMatch(/^FORGED/m)
        expect(Buffer.byteLength(text)).toBeLessThan(16 * 1024)
        // the message (with its 23 bytes of prefix) and the field, each with its original length
        expect(text.match(/…\[cut, \d+ bytes\]/g)).toEqual(["…[cut, 3145751 bytes]", "…[cut, 3145728 bytes]"])
        if (asJson) for (const line of text.trimEnd().split("\n")) expect(() => JSON.parse(line)).not.toThrow()
        // the error's text is indented below its line, never a line of its own
        else
          expect(text.trimEnd().split("\n")).toEqual([
            expect.any(String),
            expect.any(String),
            expect.stringMatching(/\terror\tfailed$/),
            "\tError: bad",
            "\t2026-01-01T00:00:00.000Z\\tinfo\\tFORGED2",
          ])
      }),
    )
})
