/**
 * `meshctl admin log` as data: the `--level`/`--stack-trace-level` lists it accepts, the scope
 * changes they ask ControlZ for, and the scope table it prints. Pure.
 */
import { formatColumns } from "./proxy-status-table.js"

/** The levels the spec names for `admin log` (part 3 §4.3). */
export const ADMIN_LOG_LEVELS = ["none", "error", "warn", "info", "debug"] as const
export type AdminLogLevel = (typeof ADMIN_LOG_LEVELS)[number]

/** The level `--reset` restores. */
export const DEFAULT_OUTPUT_LEVEL: AdminLogLevel = "info"

/** A scope as ControlZ's `/scopej/` shows it. */
export interface ControlzScope {
  readonly name: string
  readonly description: string
  readonly output_level: string
  readonly stack_trace_level: string
  readonly log_callers?: boolean
}

/** `scope` "" or "all" means every scope. */
export interface LevelSetting {
  readonly scope: string
  readonly level: AdminLogLevel
}

const isLevel = (text: string): text is AdminLogLevel => (ADMIN_LOG_LEVELS as ReadonlyArray<string>).includes(text)

/** Parses `<scope>:<level>,...` (a bare `<level>` means every scope); an error text names what is wrong. */
export const parseLevels = (flag: string, text: string): ReadonlyArray<LevelSetting> | string => {
  const settings: Array<LevelSetting> = []
  for (const item of text.split(",").map((s) => s.trim())) {
    if (item === "") continue
    const colon = item.lastIndexOf(":")
    const scope = colon < 0 ? "" : item.slice(0, colon)
    const level = colon < 0 ? item : item.slice(colon + 1)
    if (!isLevel(level)) return `${flag} ${item}: unknown level "${level}" (one of ${ADMIN_LOG_LEVELS.join(", ")})`
    settings.push({ scope: scope === "all" ? "" : scope, level })
  }
  return settings
}

/** The body of one ControlZ `PUT /scopej/<scope>`. */
interface ScopeChange {
  output_level?: AdminLogLevel
  stack_trace_level?: AdminLogLevel
}

/** One PUT body per scope: what `--level`, `--stack-trace-level` and `--reset` ask of it. */
export const scopeChanges = (
  scopes: ReadonlyArray<ControlzScope>,
  request: {
    readonly reset: boolean
    readonly levels: ReadonlyArray<LevelSetting>
    readonly stackTraceLevels: ReadonlyArray<LevelSetting>
  },
): ReadonlyMap<string, ScopeChange> => {
  const changes = new Map<string, ScopeChange>()
  const change = (scope: string): ScopeChange => {
    const known = changes.get(scope)
    if (known !== undefined) return known
    const body: ScopeChange = {}
    changes.set(scope, body)
    return body
  }
  // Every scope for a reset or an unscoped setting; later settings win over earlier ones.
  const targets = (scope: string) => (scope === "" ? scopes.map((s) => s.name) : [scope])
  if (request.reset) for (const s of scopes) change(s.name).output_level = DEFAULT_OUTPUT_LEVEL
  for (const { scope, level } of request.levels) for (const name of targets(scope)) change(name).output_level = level
  for (const { scope, level } of request.stackTraceLevels)
    for (const name of targets(scope)) change(name).stack_trace_level = level
  return changes
}

/** The `-o short` table: ACTIVE SCOPE, DESCRIPTION, LOG LEVEL, sorted by scope. */
export const scopeTable = (scopes: ReadonlyArray<ControlzScope>): string =>
  formatColumns(
    ["ACTIVE SCOPE", "DESCRIPTION", "LOG LEVEL"],
    [...scopes].sort((a, b) => a.name.localeCompare(b.name)).map((s) => [s.name, s.description, s.output_level]),
  )
