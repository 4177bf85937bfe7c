/**
 * `meshctl uninstall`: removes what `meshctl install` wrote, found by the ownership labels every
 * installed object carries. `--revision` (or the revision of `-f`/`--set`) removes one
 * revision's objects and keeps the CRDs and the namespace other revisions share; `--purge`
 * removes every revision's objects, CRDs included, and the namespace when an install created
 * it. The work is in uninstall-run.ts, loaded only when the command runs.
 */
import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import type { LogSettings } from "../../services/logging/options.js"
import { boolFlag, textFlag } from "../shared/options.js"
import { globalOptions } from "./global-options.js"
import { forceOption, operatorOptions, skipConfirmationOption } from "./install-options.js"

const options = {
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

export const uninstallCommand = (logging: Options.Options<LogSettings>) =>
  Command.make("uninstall", { ...options, logging }, (args) =>
    Effect.flatMap(
      Effect.promise(() => import("./uninstall-run.js")),
      (module) => module.runUninstall(args),
    ),
  ).pipe(Command.withDescription("Uninstall the mesh from a cluster"))
