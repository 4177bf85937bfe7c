/**
 * bug-report's effective settings: defaults, then flags, then the `--filename` YAML document on
 * top (spec part 3 §4.3: a config file applied over defaults and flags, lists replaced as JSON
 * merge does). Keys of the file are the flags' names in camelCase; the reference's spellings
 * (`istioNamespace`, `commandTimeout`, `criticalErrors`, `ignoredErrors`, `since`) are accepted.
 * Times and durations are checked here; `--duration` and `--start-time` exclude each other.
 */
import { Duration, Either } from "effect"
import { parseGoDuration } from "../config/duration.js"
import { parseSelectionFilters, type Selection } from "./filter.js"

/** What the flags give (durations and times as typed). */
export interface BugReportFlags {
  readonly meshNamespace: string
  readonly include: ReadonlyArray<string>
  readonly exclude: ReadonlyArray<string>
  readonly fullSecrets: boolean
  readonly dryRun: boolean
  readonly duration: string
  readonly startTime: string
  readonly endTime: string
  readonly criticalErrs: ReadonlyArray<string>
  readonly ignoreErrs: ReadonlyArray<string>
  readonly rqConcurrency: number
  readonly timeout: string
  readonly outputDir: string
  readonly dir: string
}

export interface BugReportSettings {
  readonly meshNamespace: string
  readonly selection: Selection
  readonly fullSecrets: boolean
  readonly dryRun: boolean
  /** Logs from this instant (undefined: all the orchestrator keeps). */
  readonly since: Date | undefined
  readonly until: Date
  readonly criticalErrs: ReadonlyArray<string>
  readonly ignoreErrs: ReadonlyArray<string>
  /** Parallel requests (the flag's 0 means the default 32). */
  readonly concurrency: number
  readonly timeout: Duration.Duration
  readonly outputDir: string
  readonly dir: string
}

export const DEFAULT_CONCURRENCY = 32

const ALIASES: Readonly<Record<string, keyof BugReportFlags>> = {
  istioNamespace: "meshNamespace",
  commandTimeout: "timeout",
  criticalErrors: "criticalErrs",
  ignoredErrors: "ignoreErrs",
  since: "duration",
}

const LISTS = new Set<keyof BugReportFlags>(["include", "exclude", "criticalErrs", "ignoreErrs"])
const BOOLEANS = new Set<keyof BugReportFlags>(["fullSecrets", "dryRun"])

/** The flags with the file's document merged over them; a string is the error. */
export const overlayConfigFile = (flags: BugReportFlags, document: unknown): BugReportFlags | string => {
  if (document === undefined || document === null) return flags
  if (typeof document !== "object" || Array.isArray(document)) return "--filename: the document is not a mapping"
  const out: Record<string, unknown> = { ...flags }
  for (const [rawKey, value] of Object.entries(document as Record<string, unknown>)) {
    const key = (ALIASES[rawKey] ?? rawKey) as keyof BugReportFlags
    if (!(key in flags)) return `--filename: unknown key "${rawKey}"`
    if (value === null) continue
    if (LISTS.has(key)) {
      if (!Array.isArray(value) || value.some((v) => typeof v !== "string"))
        return `--filename: "${rawKey}" must be a list of strings`
      out[key] = value
    } else if (BOOLEANS.has(key)) {
      if (typeof value !== "boolean") return `--filename: "${rawKey}" must be true or false`
      out[key] = value
    } else if (key === "rqConcurrency") {
      if (typeof value !== "number" || !Number.isInteger(value) || value < 0)
        return `--filename: "${rawKey}" must be a non-negative integer`
      out[key] = value
    } else {
      if (typeof value !== "string" && typeof value !== "number") return `--filename: "${rawKey}" must be a string`
      out[key] = String(value)
    }
  }
  return out as unknown as BugReportFlags
}

const parseTime = (flag: string, text: string): Date | string => {
  const date = new Date(text)
  return Number.isNaN(date.getTime()) ? `${flag} "${text}": expected an RFC 3339 time (2006-01-02T15:04:05Z)` : date
}

const parseDuration = (flag: string, text: string): Duration.Duration | string =>
  Either.match(parseGoDuration(text), { onLeft: (e) => `${flag}: ${e}`, onRight: (d) => d })

/** The checked settings at `now`; a string is the error (naming the flag). */
export const resolveSettings = (flags: BugReportFlags, now: Date): BugReportSettings | string => {
  const duration = parseDuration("--duration", flags.duration === "" ? "0s" : flags.duration)
  if (typeof duration === "string") return duration
  const timeout = parseDuration("--timeout", flags.timeout === "" ? "30m" : flags.timeout)
  if (typeof timeout === "string") return timeout
  if (Duration.toMillis(timeout) <= 0) return "--timeout must be positive"
  const hasDuration = Duration.toMillis(duration) > 0
  if (hasDuration && flags.startTime !== "") return "--duration and --start-time cannot be used together"
  const until = flags.endTime === "" ? now : parseTime("--end-time", flags.endTime)
  if (typeof until === "string") return until
  let since: Date | undefined
  if (flags.startTime !== "") {
    const start = parseTime("--start-time", flags.startTime)
    if (typeof start === "string") return start
    since = start
  } else if (hasDuration) since = new Date(until.getTime() - Duration.toMillis(duration))
  if (since !== undefined && since.getTime() > until.getTime()) return "--start-time is after --end-time"
  const include = parseSelectionFilters(flags.include)
  if (typeof include === "string") return `--include: ${include}`
  const exclude = parseSelectionFilters(flags.exclude)
  if (typeof exclude === "string") return `--exclude: ${exclude}`
  if (flags.rqConcurrency < 0) return "--rq-concurrency must not be negative"
  return {
    meshNamespace: flags.meshNamespace,
    selection: { include, exclude },
    fullSecrets: flags.fullSecrets,
    dryRun: flags.dryRun,
    since,
    until,
    criticalErrs: flags.criticalErrs,
    ignoreErrs: flags.ignoreErrs,
    concurrency: flags.rqConcurrency === 0 ? DEFAULT_CONCURRENCY : flags.rqConcurrency,
    timeout,
    outputDir: flags.outputDir,
    dir: flags.dir,
  }
}

/** Drops the lines of a log written after `until` (the API's sinceTime bounds only the start). */
export const trimAfter = (log: string, until: Date): string => {
  const limit = until.getTime()
  const lines = log.split("\n")
  const kept = lines.filter((line) => {
    const stamp = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))/.exec(line)
    if (stamp === null) return true
    const at = new Date(stamp[1]!).getTime()
    return Number.isNaN(at) || at <= limit
  })
  return kept.join("\n")
}
