/**
 * `meshctl experimental precheck`: checks a cluster before installing or upgrading the mesh and
 * prints the findings as analysis messages (spec part 3 §4.3 experimental precheck). The checks
 * are in services/precheck; the cluster is read in precheck-run.ts, loaded only when it runs.
 */
import { Command, type Options } from "@effect/cli"
import { Effect } from "effect"
import type { LogSettings } from "../../../services/logging/options.js"
import { options } from "./precheck-options.js"

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
