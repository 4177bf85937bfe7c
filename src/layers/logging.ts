/**
 * The logger of every binary: filters by scope, formats console or JSON lines and writes them
 * to the `--log_target`s. Levels live in a mutable table so the introspection listener can
 * change them while the process runs.
 *
 * Every line is escaped and bounded as it is formatted (services/logging/log-format.ts), and
 * lines marked `throttled(reason)` are thinned per scope, level and reason: the first is
 * written, the rest counted into one "suppressed N" line per interval (log-throttle.ts), so a
 * caller repeating a refused request costs two lines every ten seconds, not one per request.
 */
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs"
import { dirname } from "node:path"
import {
  Cause,
  Clock,
  Context,
  Duration,
  Effect,
  FiberRef,
  FiberRefs,
  HashMap,
  Layer,
  Logger,
  LogLevel,
  Option,
  Tracer,
} from "effect"
import { formatLogLine, type LogRecord } from "../services/logging/log-format.js"
import {
  due,
  emptyThrottle,
  LINE_THROTTLE_INTERVAL_MS,
  LINE_THROTTLE_MAX_KEYS,
  lineThrottleKey,
  occur,
  parseLineThrottleKey,
  type Summary,
  suppressedLine,
  type ThrottleState,
} from "../services/logging/log-throttle.js"
import {
  Logging,
  levelNameOf,
  passes,
  SCOPE_ANNOTATION,
  type ScopeState,
  THROTTLE_ANNOTATION,
  UnknownScopeError,
} from "../services/logging/logging.js"
import type { LogSettings } from "../services/logging/options.js"
import { DEFAULT_SCOPE } from "../services/logging/scopes.js"

type Writer = (line: string) => void

const openTarget = (target: string): { write: Writer; close: () => void } => {
  if (target === "stdout") return { write: (line) => process.stdout.write(line), close: () => {} }
  if (target === "stderr") return { write: (line) => process.stderr.write(line), close: () => {} }
  mkdirSync(dirname(target), { recursive: true })
  const fd = openSync(target, "a")
  return { write: (line) => writeSync(fd, line), close: () => closeSync(fd) }
}

const messageText = (message: unknown): string => {
  const parts = Array.isArray(message) ? message : [message]
  return parts.map((part) => (typeof part === "string" ? part : JSON.stringify(part))).join(" ")
}

const currentSpan = (context: FiberRefs.FiberRefs): Option.Option<Tracer.AnySpan> =>
  Context.getOption(FiberRefs.getOrDefault(context, FiberRef.currentContext), Tracer.ParentSpan)

/** The caller of a log line is the innermost `Effect.fn` span it runs in. */
const callerOf = (context: FiberRefs.FiberRefs): string | undefined => {
  const span = currentSpan(context)
  return Option.isSome(span) && span.value._tag === "Span" ? span.value.name : undefined
}

/** The stack of a log line: its spans from innermost outwards (the Effect equivalent of a call stack). */
const spanStack = (context: FiberRefs.FiberRefs): string => {
  const frames: Array<string> = []
  let span = currentSpan(context)
  while (Option.isSome(span) && span.value._tag === "Span") {
    frames.push(`    at ${span.value.name}`)
    span = span.value.parent
  }
  return frames.length === 0 ? "    at <root fiber>" : frames.join("\n")
}

/** Builds the Logging service and the logger that obeys it. */
export const layer = (settings: LogSettings, scopes: ReadonlyArray<string>): Layer.Layer<Logging> => {
  const names = scopes.filter((scope) => scope !== "all")
  const state = new Map<
    string,
    { outputLevel: ScopeState["outputLevel"]; stackTraceLevel: ScopeState["stackTraceLevel"]; logCallers: boolean }
  >(
    names.map((name) => [
      name,
      {
        outputLevel: settings.outputLevels[name] ?? "info",
        stackTraceLevel: settings.stackTraceLevels[name] ?? "none",
        logCallers: settings.callerScopes.includes(name),
      },
    ]),
  )
  const snapshot = (name: string): ScopeState => ({ name, ...state.get(name)! })

  const service = Logging.of({
    settings,
    scopes: Effect.sync(() => names.map(snapshot)),
    scope: (name) => (state.has(name) ? Effect.succeed(snapshot(name)) : Effect.fail(new UnknownScopeError(name))),
    updateScope: (name, update) =>
      Effect.suspend(() => {
        const current = state.get(name)
        if (current === undefined) return Effect.fail(new UnknownScopeError(name))
        if (update.outputLevel !== undefined) current.outputLevel = update.outputLevel
        if (update.stackTraceLevel !== undefined) current.stackTraceLevel = update.stackTraceLevel
        if (update.logCallers !== undefined) current.logCallers = update.logCallers
        return Effect.succeed(snapshot(name))
      }),
  })

  const loggerLayer = Layer.unwrapScoped(
    Effect.gen(function* () {
      const targets = yield* Effect.acquireRelease(
        Effect.sync(() => settings.targets.map(openTarget)),
        (opened) =>
          Effect.sync(() => {
            for (const target of opened) target.close()
          }),
      )
      const write: Writer = (line) => {
        for (const target of targets) target.write(line)
      }

      // Throttled lines (see the module comment): state of this logger only, read and changed
      // synchronously by the logger and the summary fiber.
      let throttle: ThrottleState = emptyThrottle
      const summaryRecord = (summary: Summary, now: number): LogRecord => {
        const key = parseLineThrottleKey(summary.key) ?? {
          scope: DEFAULT_SCOPE,
          level: "warn",
          reason: `other kinds of lines (more than ${LINE_THROTTLE_MAX_KEYS} throttled at once)`,
        }
        return {
          time: new Date(now),
          level: key.level,
          scope: key.scope,
          message: suppressedLine(summary, key.reason),
          fields: [["suppressed", summary.count]],
        }
      }
      const writeSummaries = (now: number, flushAll: boolean) => {
        if (throttle.windows.size === 0) return
        const result = due(throttle, now, LINE_THROTTLE_INTERVAL_MS, flushAll)
        throttle = result.state
        for (const summary of result.summaries) write(formatLogLine(summaryRecord(summary, now), settings.asJson))
      }
      const flushSummaries = (flushAll: boolean) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => writeSummaries(now, flushAll)))
      // Summaries fall due even when the repeats stop; what is still counted is written at exit.
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.zipRight(Effect.sleep(Duration.millis(LINE_THROTTLE_INTERVAL_MS)), flushSummaries(false)),
        ),
      )
      yield* Effect.addFinalizer(() => flushSummaries(true))

      const logger = Logger.make(({ logLevel, message, annotations, cause, date, context }) => {
        const scopeValue = HashMap.get(annotations, SCOPE_ANNOTATION)
        const scope =
          Option.isSome(scopeValue) && typeof scopeValue.value === "string" ? scopeValue.value : DEFAULT_SCOPE
        const scopeState = state.get(scope) ?? state.get(DEFAULT_SCOPE)
        const level = levelNameOf(logLevel)
        if (scopeState === undefined || !passes(level, scopeState.outputLevel)) return
        const now = date.getTime()
        // Summaries that fell due first, so that the lines stay in order.
        writeSummaries(now, false)
        const reason = HashMap.get(annotations, THROTTLE_ANNOTATION)
        if (Option.isSome(reason) && typeof reason.value === "string") {
          const step = occur(
            throttle,
            lineThrottleKey({ scope, level, reason: reason.value }),
            now,
            LINE_THROTTLE_MAX_KEYS,
          )
          throttle = step.state
          if (!step.log) return
        }
        const fields: Array<readonly [string, unknown]> = []
        for (const [key, value] of annotations)
          if (key !== SCOPE_ANNOTATION && key !== THROTTLE_ANNOTATION) fields.push([key, value])
        const wantsStack = passes(level, scopeState.stackTraceLevel)
        const stack = Cause.isEmpty(cause)
          ? wantsStack
            ? spanStack(context)
            : undefined
          : wantsStack
            ? Cause.pretty(cause)
            : Cause.squash(cause) instanceof Error
              ? String(Cause.squash(cause))
              : Cause.pretty(cause)
        write(
          formatLogLine(
            {
              time: date,
              level,
              scope,
              caller: scopeState.logCallers ? callerOf(context) : undefined,
              message: messageText(message),
              fields,
              stack,
            },
            settings.asJson,
          ),
        )
      })
      return Layer.mergeAll(Logger.replace(Logger.defaultLogger, logger), Logger.minimumLogLevel(LogLevel.All))
    }),
  )
  return Layer.merge(Layer.succeed(Logging, service), loggerLayer)
}
