/**
 * `meshctl experimental precheck`: checks a cluster before installing or upgrading the mesh and
 * prints the findings as analysis messages (spec part 3 §4.3 experimental precheck). The checks
 * are in services/precheck; the cluster is read in precheck-run.ts, loaded only when it runs.
 */
import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import type { LogSettings } from "../../services/logging/options.js"
import { boolFlag, textFlag } from "../shared/options.js"
import { globalOptions } from "./global-options.js"

const options = {
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

export const precheckCommand = (logging: Options.Options<LogSettings>) =>
  Command.make("precheck", { ...options, logging }, (args) =>
    Effect.flatMap(
      Effect.promise(() => import("./precheck-run.js")),
      (module) => module.runPrecheck(args),
    ),
  ).pipe(
    Command.withDescription(
      "Checks the cluster for problems before installing or upgrading the mesh: orchestrator version, install permissions, revisions and injection",
    ),
  )
