/**
 * `meshctl install` (alias `apply`), `meshctl upgrade` and `meshctl manifest install` (alias
 * `apply`): render the install manifest of the operator resource (profile, `-f` files,
 * `--set`), confirm unless `-y`, server-side apply it (CRDs first), prune what the previous
 * install of the same revision wrote and no longer renders, and wait for the workloads to be
 * ready. The work is in install-run.ts, loaded only when the command runs.
 */
import { Command, type Options } from "@effect/cli"
import { Effect } from "effect"
import type { LogSettings } from "../../../services/logging/options.js"
import { installOptions } from "./install-options.js"

/** One name of the install command (@effect/cli has no command aliases). */
export const installCommandNamed = (name: string, logging: Options.Options<LogSettings>) =>
  Command.make(name, { ...installOptions, logging }, (args) =>
    Effect.flatMap(
      Effect.promise(() => import("./install-run.js")),
      (module) => module.runInstall(args),
    ),
  ).pipe(
    Command.withDescription(
      name === "upgrade"
        ? "Upgrade the mesh control plane in place (the same as install)"
        : "Applies a mesh manifest, installing or reconfiguring the mesh on a cluster",
    ),
  )

/** `meshctl install`, `meshctl apply`, `meshctl upgrade`. */
export const installCommands = (logging: Options.Options<LogSettings>) => [
  installCommandNamed("install", logging),
  installCommandNamed("apply", logging),
  installCommandNamed("upgrade", logging),
]
