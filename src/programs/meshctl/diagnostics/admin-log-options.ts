/**
 * The flags of `admin log` and what admin-log-run.ts receives: shared by admin-command.ts (which
 * declares the command) and admin-log-run.ts (loaded only when it runs), so neither imports the
 * other's types.
 */
import { type Command, Options } from "@effect/cli"
import type { Duration } from "effect"
import { boolFlag, textFlag, uint16Flag } from "../../shared/options.js"
import { globalOptions } from "../global-options.js"
import { adminGroupOptions } from "./admin-options.js"

export const logOptions = {
  ctrlzPort: uint16Flag("ctrlz_port", 9876).pipe(Options.withDescription("ControlZ port")),
  level: textFlag("level").pipe(
    Options.withDescription(
      "Comma-separated list of output levels per scope: <scope>:<level>,...; levels none, error, warn, info, debug",
    ),
  ),
  stackTraceLevel: textFlag("stack-trace-level").pipe(
    Options.withDescription("Comma-separated list of stack trace levels per scope: <scope>:<level>,..."),
  ),
  output: Options.choice("output", ["short", "json", "yaml"]).pipe(
    Options.withAlias("o"),
    Options.withDefault("short" as const),
    Options.withDescription("Output format: one of json|yaml|short"),
  ),
  reset: boolFlag("reset").pipe(Options.withDescription("Reset every scope to the default log level (info)")),
  ...adminGroupOptions,
  global: globalOptions,
}

type Parsed = Command.Command.ParseConfig<typeof logOptions>

/** The command's inputs, as admin-log-run.ts reads them. */
export type AdminLogArgs = Parsed & { readonly pod: string; readonly timeout: Duration.Duration }
