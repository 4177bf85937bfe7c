/**
 * `meshctl admin` (alias `meshd`): the control plane's own configuration, with `admin log`
 * (alias `admin l`) to get, set or reset its log scopes through ControlZ (spec part 3 §4.2,
 * §4.3). The work is in admin-log-run.ts, loaded only when the command runs.
 */
import { Args, Command, Options } from "@effect/cli"
import { Duration, Effect, Option } from "effect"
import type { LogSettings } from "../../services/logging/options.js"
import { boolFlag, textFlag, uint16Flag } from "../shared/options.js"
import { adminGroupOptions } from "./admin-options.js"
import { caCommand } from "./ca-command.js"
import { globalOptions } from "./global-options.js"

const options = {
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

const podArg = Args.text({ name: "pod-name" }).pipe(
  Args.withDescription("a control-plane pod (default: every pod the selector matches)"),
  Args.optional,
)

type Parsed = Command.Command.ParseConfig<typeof options>

/** The command's inputs, as admin-log-run.ts reads them. */
export type AdminLogArgs = Parsed & { readonly pod: string; readonly timeout: Duration.Duration }

const logCommand = (name: string, logging: Options.Options<LogSettings>) =>
  Command.make(name, { ...options, pod: podArg, logging }, (args) =>
    Effect.flatMap(
      Effect.promise(() => import("./admin-log-run.js")),
      (module) =>
        module.runAdminLog({
          ...args,
          pod: Option.getOrElse(args.pod, () => ""),
          timeout: args.global.orchclientTimeout ?? Duration.seconds(15),
        }),
    ),
  ).pipe(Command.withDescription("Retrieve or update the control plane's log levels"))

const group = (name: string, logging: Options.Options<LogSettings>) =>
  Command.make(name).pipe(
    Command.withDescription("Manage control plane (meshd) configuration"),
    Command.withSubcommands([logCommand("log", logging), logCommand("l", logging), caCommand(logging)]),
  )

/** `meshctl admin`. */
export const adminCommand = (logging: Options.Options<LogSettings>) => group("admin", logging)
/** `meshctl meshd`: the same group under its alias (@effect/cli has no command aliases). */
export const adminAliasCommand = (logging: Options.Options<LogSettings>) => group("meshd", logging)
