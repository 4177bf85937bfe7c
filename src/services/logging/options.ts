/**
 * The logging flags shared by every command (`--log_as_json`, `--log_caller`,
 * `--log_output_level`, `--log_stacktrace_level`, `--log_target`, `--vklog`) and their parsing
 * against a binary's scopes. Parsing is pure so the CLI and the introspection API share it.
 */
import { Either } from "effect"
import { ALL_SCOPES, DEFAULT_SCOPE, LOG_LEVELS, type LogLevelName } from "./scopes.js"

export interface LogSettings {
  readonly asJson: boolean
  /** Scopes whose lines carry caller information. */
  readonly callerScopes: ReadonlyArray<string>
  /** Minimum output level per scope (every known scope has an entry). */
  readonly outputLevels: Readonly<Record<string, LogLevelName>>
  /** Level at or above which a stack trace is attached, per scope. */
  readonly stackTraceLevels: Readonly<Record<string, LogLevelName>>
  /** `stdout`, `stderr` or file paths. */
  readonly targets: ReadonlyArray<string>
  /** Verbosity of the orchestrator client's own logging (`klog`). */
  readonly vklog: number
}

export interface RawLogFlags {
  readonly asJson: boolean
  readonly caller: string
  readonly outputLevel: string
  readonly stackTraceLevel: string
  readonly targets: ReadonlyArray<string>
  readonly vklog: number
}

export const isLogLevel = (value: string): value is LogLevelName =>
  (LOG_LEVELS as ReadonlyArray<string>).includes(value)

const unknownScope = (flag: string, scope: string, scopes: ReadonlyArray<string>) =>
  `${flag}: unknown scope "${scope}" (known scopes: ${scopes.join(", ")})`

/**
 * Parses `<scope>:<level>,...` into per-scope levels over `base`. A bare level applies to the
 * default scope; the `all` scope applies to every scope.
 */
export const parseScopeLevels = (
  flag: string,
  text: string,
  scopes: ReadonlyArray<string>,
  base: Readonly<Record<string, LogLevelName>>,
): Either.Either<Record<string, LogLevelName>, string> => {
  const result: Record<string, LogLevelName> = { ...base }
  for (const part of text.split(",")) {
    const item = part.trim()
    if (item === "") continue
    const colon = item.lastIndexOf(":")
    const scope = colon === -1 ? DEFAULT_SCOPE : item.slice(0, colon).trim()
    const level = (colon === -1 ? item : item.slice(colon + 1)).trim()
    if (!isLogLevel(level)) {
      return Either.left(`${flag}: unknown level "${level}" for scope "${scope}" (levels: ${LOG_LEVELS.join(", ")})`)
    }
    if (!scopes.includes(scope)) return Either.left(unknownScope(flag, scope, scopes))
    if (scope === ALL_SCOPES) {
      for (const name of scopes) result[name] = level
    } else {
      result[scope] = level
    }
  }
  return Either.right(result)
}

const uniform = (scopes: ReadonlyArray<string>, level: LogLevelName): Record<string, LogLevelName> =>
  Object.fromEntries(scopes.map((scope) => [scope, level]))

/** Validates and resolves the raw flag values for a binary with the given scopes. */
export const resolveLogSettings = (
  raw: RawLogFlags,
  scopes: ReadonlyArray<string>,
): Either.Either<LogSettings, string> =>
  Either.gen(function* () {
    const outputLevels = yield* parseScopeLevels("--log_output_level", raw.outputLevel, scopes, uniform(scopes, "info"))
    const stackTraceLevels = yield* parseScopeLevels(
      "--log_stacktrace_level",
      raw.stackTraceLevel,
      scopes,
      uniform(scopes, "none"),
    )
    const callerScopes: Array<string> = []
    for (const part of raw.caller.split(",")) {
      const scope = part.trim()
      if (scope === "") continue
      if (!scopes.includes(scope)) return yield* Either.left(unknownScope("--log_caller", scope, scopes))
      callerScopes.push(...(scope === ALL_SCOPES ? scopes : [scope]))
    }
    if (!Number.isInteger(raw.vklog) || raw.vklog < 0) {
      return yield* Either.left(`--vklog: expected a non-negative integer, got ${raw.vklog}`)
    }
    const targets = raw.targets.length === 0 ? ["stdout"] : raw.targets
    // `klog` verbosity above zero opens the orchestrator client's debug output.
    if (raw.vklog > 0 && scopes.includes("klog")) outputLevels.klog = "debug"
    return {
      asJson: raw.asJson,
      callerScopes,
      outputLevels,
      stackTraceLevels,
      targets,
      vklog: raw.vklog,
    }
  })
