/**
 * The importance heuristic of bug-report's logs: how much a log looks worth reading first. A log
 * with a line matching one of `--critical-errs` ranks above every other; then panics/fatals, then
 * error lines. Lines matching `--ignore-errs` do not count. The ranking feeds the "important
 * logs" summary printed at the end and written into the archive.
 */
import { globFind } from "./glob.js"

export interface ImportanceOptions {
  readonly criticalErrs: ReadonlyArray<string>
  readonly ignoreErrs: ReadonlyArray<string>
}

export interface LogImportance {
  readonly criticalLines: number
  readonly panicLines: number
  readonly errorLines: number
  /** Higher is more important; 0 when nothing stands out. */
  readonly score: number
}

const PANIC = /\b(panic|fatal)\b/i
const ERROR = /\b(error|err|critical)\b|\berror[:=]|\blevel=error\b|"level":"error"/i

/** Weights: one critical line outweighs any count of panics, one panic any count of errors (to a million). */
const CRITICAL_WEIGHT = 1e12
const PANIC_WEIGHT = 1e6

export const logImportance = (text: string, options: ImportanceOptions): LogImportance => {
  let criticalLines = 0
  let panicLines = 0
  let errorLines = 0
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue
    if (options.ignoreErrs.some((p) => globFind(p, line))) continue
    if (options.criticalErrs.some((p) => globFind(p, line))) criticalLines++
    else if (PANIC.test(line)) panicLines++
    else if (ERROR.test(line)) errorLines++
  }
  return {
    criticalLines,
    panicLines,
    errorLines,
    score:
      criticalLines * CRITICAL_WEIGHT + Math.min(panicLines, 999_999) * PANIC_WEIGHT + Math.min(errorLines, 999_999),
  }
}

export interface RankedLog {
  /** Path of the log inside the archive. */
  readonly path: string
  readonly importance: LogImportance
}

/** The logs with something in them, most important first (ties by path), at most `limit`. */
export const rankLogs = (logs: ReadonlyArray<RankedLog>, limit = 10): ReadonlyArray<RankedLog> =>
  logs
    .filter((l) => l.importance.score > 0)
    .sort((a, b) => b.importance.score - a.importance.score || a.path.localeCompare(b.path))
    .slice(0, limit)

/** The summary printed at the end of a bug report. */
export const importantLogsSummary = (ranked: ReadonlyArray<RankedLog>): string =>
  ranked.length === 0
    ? "No logs with errors were found."
    : [
        "Logs ranked by importance (critical errors, panics, errors):",
        ...ranked.map(
          (r, i) =>
            `  ${i + 1}. ${r.path}: ${r.importance.criticalLines} critical, ${r.importance.panicLines} panic, ${r.importance.errorLines} error lines`,
        ),
      ].join("\n")
