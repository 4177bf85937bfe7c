/**
 * `meshctl uninstall`: removes what `meshctl install` wrote, found by the ownership labels every
 * installed object carries. `--revision` (or the revision of `-f`/`--set`) removes one
 * revision's objects and keeps the CRDs and the namespace other revisions share; `--purge`
 * removes every revision's objects, CRDs included, and the namespace when an install created
 * it. The work is in uninstall-run.ts, loaded only when the command runs.
 */
import { Command, type Options } from "@effect/cli"
import { Effect } from "effect"
import type { LogSettings } from "../../../services/logging/options.js"
import { options } from "./uninstall-options.js"

export const uninstallCommand = (logging: Options.Options<LogSettings>) =>
  Command.make("uninstall", { ...options, logging }, (args) =>
    Effect.flatMap(
      Effect.promise(() => import("./uninstall-run.js")),
      (module) => module.runUninstall(args),
    ),
  ).pipe(Command.withDescription("Uninstall the mesh from a cluster"))
