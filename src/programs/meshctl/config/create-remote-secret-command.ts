/**
 * `meshctl create-remote-secret`: prints a Secret (to pipe into the orchestrator CLI) with which
 * the control plane of another cluster reads this one (spec part 3 §4.3, §5 rule 3). The work is
 * in create-remote-secret-run.ts, loaded only when the command runs.
 */
import { Command, type Options } from "@effect/cli"
import { Effect } from "effect"
import type { LogSettings } from "../../../services/logging/options.js"
import { options } from "./create-remote-secret-options.js"

export const createRemoteSecretCommand = (logging: Options.Options<LogSettings>) =>
  Command.make("create-remote-secret", { ...options, logging }, (args) =>
    Effect.flatMap(
      Effect.promise(() => import("./create-remote-secret-run.js")),
      (module) => module.runCreateRemoteSecret(args),
    ),
  ).pipe(
    Command.withDescription(
      "Create a secret with credentials to allow the mesh to access remote orchestrator API servers",
    ),
  )
