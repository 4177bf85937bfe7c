/**
 * `meshctl admin` (alias `meshd`): the control plane's own configuration, with `admin log`
 * (alias `admin l`) to get, set or reset its log scopes through ControlZ (spec part 3 §4.2,
 * §4.3). The work is in admin-log-run.ts, loaded only when the command runs.
 */
import { Args, Command, type Options } from "@effect/cli"
import { Duration, Effect, Option } from "effect"
import type { LogSettings } from "../../../services/logging/options.js"
import { logOptions } from "./admin-log-options.js"
import { caCommand } from "./ca-command.js"

const podArg = Args.text({ name: "pod-name" }).pipe(
  Args.withDescription("a control-plane pod (default: every pod the selector matches)"),
  Args.optional,
)

const logCommand = (name: string, logging: Options.Options<LogSettings>) =>
  Command.make(name, { ...logOptions, pod: podArg, logging }, (args) =>
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
