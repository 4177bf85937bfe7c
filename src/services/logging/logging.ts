/**
 * The Logging service: per-scope output levels, stack-trace levels and caller flags, readable
 * and changeable while the process runs (the introspection listener exposes them).
 * Code logs into a scope with `withScope("ads")`; lines without a scope belong to `default`.
 */
import { Context, Effect, type LogLevel } from "effect"
import type { LogSettings } from "./options.js"
import type { LogLevelName } from "./scopes.js"

export interface ScopeState {
  readonly name: string
  readonly outputLevel: LogLevelName
  readonly stackTraceLevel: LogLevelName
  readonly logCallers: boolean
}

export interface ScopeUpdate {
  readonly outputLevel?: LogLevelName
  readonly stackTraceLevel?: LogLevelName
  readonly logCallers?: boolean
}

export class UnknownScopeError extends Error {
  readonly _tag = "UnknownScopeError"
  constructor(readonly scope: string) {
    super(`unknown log scope "${scope}"`)
  }
}

export interface LoggingShape {
  readonly settings: LogSettings
  readonly scopes: Effect.Effect<ReadonlyArray<ScopeState>>
  readonly scope: (name: string) => Effect.Effect<ScopeState, UnknownScopeError>
  readonly updateScope: (name: string, update: ScopeUpdate) => Effect.Effect<ScopeState, UnknownScopeError>
}

export class Logging extends Context.Tag("mesh/Logging")<Logging, LoggingShape>() {}

export const SCOPE_ANNOTATION = "scope"

/** Runs an effect with its log lines attributed to a scope. */
export const withScope =
  (scope: string) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.annotateLogs(self, SCOPE_ANNOTATION, scope)

/**
 * The annotation that marks a line as one a caller can repeat at will (a refused request, a NACK,
 * a decode error): the logger writes the first of each scope, level and reason per interval and
 * counts the rest into one "suppressed N" line (see log-throttle.ts, `lineThrottleKey`).
 */
export const THROTTLE_ANNOTATION = "throttle"

/**
 * Runs an effect with its log lines throttled under `reason`: a fixed text naming the kind of
 * line (never a caller's value, which would make every line a new reason).
 */
export const throttled =
  (reason: string) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.annotateLogs(self, THROTTLE_ANNOTATION, reason)

const RANK: Record<LogLevelName, number> = { debug: 0, info: 1, warn: 2, error: 3, fatal: 4, none: 5 }

export const levelNameOf = (level: LogLevel.LogLevel): LogLevelName => {
  switch (level._tag) {
    case "All":
    case "Trace":
    case "Debug":
      return "debug"
    case "Info":
      return "info"
    case "Warning":
      return "warn"
    case "Error":
      return "error"
    case "Fatal":
      return "fatal"
    default:
      return "none"
  }
}

/** Whether a line at `level` passes a scope whose threshold is `threshold`. */
export const passes = (level: LogLevelName, threshold: LogLevelName): boolean =>
  threshold !== "none" && level !== "none" && RANK[level] >= RANK[threshold]
