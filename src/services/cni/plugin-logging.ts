/**
 * How the plugin logs. Stdout carries the CNI result, so log lines go to stderr (the runtime
 * keeps it with the failed call) as JSON, and, as in the reference, also to a file in the node
 * agent's run directory when the config names one. The level is the config's
 * `plugin_log_level`, else `log_level` (install-cni's `--log-level`), else `warn`.
 */
import { isLogLevel, type LogSettings } from "../logging/options.js"
import { cniScopes, type LogLevelName } from "../logging/scopes.js"

export const PLUGIN_LOG_FILE = "plugin.log"
export const DEFAULT_PLUGIN_LOG_LEVEL: LogLevelName = "warn"

/** The reference's level names (zap's) mapped onto the mesh's. */
const levelOf = (text: unknown): LogLevelName | undefined => {
  if (typeof text !== "string") return undefined
  const lower = text.trim().toLowerCase()
  if (lower === "warning") return "warn"
  if (lower === "dpanic" || lower === "panic") return "fatal"
  return isLogLevel(lower) ? lower : undefined
}

/** What the logger needs from stdin; any config (even one that fails later checks) gives what it can. */
export const pluginLogOptions = (stdin: string): { readonly level: LogLevelName; readonly runDir: string } => {
  let raw: Record<string, unknown> = {}
  try {
    const parsed: unknown = JSON.parse(stdin)
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) raw = parsed as Record<string, unknown>
  } catch {
    // Not JSON: the command reports that; the logger uses its defaults.
  }
  return {
    level: levelOf(raw.plugin_log_level) ?? levelOf(raw.log_level) ?? DEFAULT_PLUGIN_LOG_LEVEL,
    runDir: typeof raw.cni_agent_run_dir === "string" ? raw.cni_agent_run_dir : "",
  }
}

export const pluginLogSettings = (level: LogLevelName, targets: ReadonlyArray<string>): LogSettings => ({
  asJson: true,
  callerScopes: [],
  outputLevels: Object.fromEntries(cniScopes.map((scope) => [scope, level])),
  stackTraceLevels: Object.fromEntries(cniScopes.map((scope) => [scope, "none" as const])),
  targets,
  vklog: 0,
})
