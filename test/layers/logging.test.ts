/** The logger: scope filtering, console and JSON formats, file targets, run-time level changes. */
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { layer as loggingLayer } from "../../src/layers/logging.js"
import { Logging, withScope } from "../../src/services/logging/logging.js"
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
})
