/**
 * `meshctl install` (alias `apply`), `meshctl upgrade` and `meshctl manifest install` (alias
 * `apply`): render the install manifest of the operator resource (profile, `-f` files,
 * `--set`), confirm unless `-y`, server-side apply it (CRDs first), prune what the previous
 * install of the same revision wrote and no longer renders, and wait for the workloads to be
 * ready. The work is in install-run.ts, loaded only when the command runs.
 */
import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import type { LogSettings } from "../../services/logging/options.js"
import { boolFlag, durationFlag } from "../shared/options.js"
import { globalOptions } from "./global-options.js"
import { chartsOption, forceOption, operatorOptions, skipConfirmationOption } from "./install-options.js"

const options = {
  ...operatorOptions,
  charts: chartsOption,
  force: forceOption,
  readinessTimeout: durationFlag("readiness-timeout", "5m0s").pipe(
    Options.withDescription("Maximum time to wait for mesh resources in each component to be ready"),
  ),
  skipConfirmation: skipConfirmationOption,
  verify: boolFlag("verify").pipe(Options.withDescription("Verify the control plane after installation")),
  global: globalOptions,
}

export type InstallArgs = Command.Command.ParseConfig<typeof options>

/** One name of the install command (@effect/cli has no command aliases). */
export const installCommandNamed = (name: string, logging: Options.Options<LogSettings>) =>
  Command.make(name, { ...options, logging }, (args) =>
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
