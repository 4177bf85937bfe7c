/**
 * The options of `precheck` and what its run file receives: shared by precheck-command.ts (which
 * declares the command) and precheck-run.ts (loaded only when it runs), so neither imports the other's types.
 */
import { type Command, Options } from "@effect/cli"
import { boolFlag, textFlag } from "../../shared/options.js"
import { globalOptions } from "../global-options.js"

export const options = {
  fromVersion: textFlag("from-version").pipe(
    Options.withAlias("f"),
    Options.withDescription("Check the settings in use against the changes since this version (e.g. 1.22)"),
  ),
  output: textFlag("output", "log").pipe(
    Options.withAlias("o"),
    Options.withDescription("Output format: one of [log json yaml]"),
  ),
  outputThreshold: textFlag("output-threshold", "Warning").pipe(
    Options.withDescription(
      "The severity level of precheck at which to display messages. Valid values: [Info Warning Error]",
    ),
  ),
  revision: textFlag("revision").pipe(
    Options.withAlias("r"),
    Options.withDescription("Control plane revision to check"),
  ),
  skipControlplane: boolFlag("skip-controlplane").pipe(Options.withDescription("Skip checking the control plane")),
  global: globalOptions,
}

export type PrecheckArgs = Command.Command.ParseConfig<typeof options>
