/**
 * `meshctl verify-install`: re-renders the install of the operator resource (`-f`, `--set`,
 * `--revision`) and checks that every object exists in the cluster and every Deployment and
 * DaemonSet is ready. Exits 1 when something is missing or not ready. The work is in
 * verify-install-run.ts, loaded only when the command runs.
 */
import { Command, type Options } from "@effect/cli"
import { Effect } from "effect"
import type { LogSettings } from "../../../services/logging/options.js"
import { options } from "./verify-install-options.js"

export const verifyInstallCommand = (logging: Options.Options<LogSettings>) =>
  Command.make("verify-install", { ...options, logging }, (args) =>
    Effect.flatMap(
      Effect.promise(() => import("./verify-install-run.js")),
      (module) => module.runVerifyInstall(args),
    ),
  ).pipe(Command.withDescription("Verifies the mesh installation status against the installation file"))
