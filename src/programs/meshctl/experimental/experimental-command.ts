/**
 * `meshctl experimental` (alias `x`): the group of experimental commands (spec part 3 §4.2).
 * Holds `proxy-status` (`ps`) and `version` so far; other experimental commands join here.
 */
import { Command, type Options } from "@effect/cli"
import type { LogSettings } from "../../../services/logging/options.js"
import { proxyStatusAliasCommand, proxyStatusCommand } from "../diagnostics/proxy-status-command.js"
import { experimentalVersionCommand } from "../diagnostics/version-command.js"
import { authzCommand } from "./authz-command.js"
import { injectorCommand } from "./injector-command.js"
import { internalDebugCommand } from "./internal-debug-command.js"
import { metricsCommands } from "./metrics-command.js"
import { precheckCommand } from "./precheck-command.js"
import { proxyStatsCommands } from "./proxy-stats-command.js"
import { workloadCommand } from "./workload-command.js"

const group = (name: string, logging: Options.Options<LogSettings>) =>
  Command.make(name).pipe(
    Command.withDescription("Experimental commands that may be modified or deprecated"),
    Command.withSubcommands([
      proxyStatusCommand(logging),
      proxyStatusAliasCommand(logging),
      experimentalVersionCommand(logging),
      precheckCommand(logging),
      injectorCommand(logging),
      workloadCommand(logging),
      ...proxyStatsCommands(logging),
      internalDebugCommand(logging),
      ...metricsCommands(logging),
      authzCommand(logging),
    ]),
  )

/** `meshctl experimental`. */
export const experimentalCommand = (logging: Options.Options<LogSettings>) => group("experimental", logging)
/** `meshctl x`: the same group under its short name. */
export const experimentalAliasCommand = (logging: Options.Options<LogSettings>) => group("x", logging)
