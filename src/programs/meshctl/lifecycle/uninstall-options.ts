/**
 * The options of `uninstall` and what its run file receives: shared by uninstall-command.ts (which
 * declares the command) and uninstall-run.ts (loaded only when it runs), so neither imports the other's types.
 */
import { type Command, Options } from "@effect/cli"
import { boolFlag, textFlag } from "../../shared/options.js"
import { globalOptions } from "../global-options.js"
import { forceOption, operatorOptions, skipConfirmationOption } from "./install-options.js"

export const options = {
  ...operatorOptions,
  // One operator file, as the spec (part 3 §4.3) and the reference have it; install overlays several.
  filename: textFlag("filename").pipe(
    Options.map((file): ReadonlyArray<string> => (file === "" ? [] : [file])),
    Options.withAlias("f"),
    Options.withDescription("The filename of the operator custom resource"),
  ),
  force: forceOption,
  purge: boolFlag("purge").pipe(
    Options.withDescription(
      "Delete all mesh related resources of every revision, custom resource definitions and cluster-scoped resources included",
    ),
  ),
  skipConfirmation: skipConfirmationOption,
  verbose: boolFlag("verbose").pipe(Options.withAlias("v"), Options.withDescription("Verbose output")),
  global: globalOptions,
}

export type UninstallArgs = Command.Command.ParseConfig<typeof options>
