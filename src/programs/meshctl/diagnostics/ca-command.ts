/**
 * `meshctl admin ca` (issue 43): the control plane's certificate authority. `status` shows where
 * a root key rotation stands (phase, roots, the trust bundle's version and the agents that do
 * not hold it yet); `rotate-key` starts one for the self-signed CA (a new key and root, published
 * to every agent before it signs, the old root kept until its certificates expire). Both talk to
 * the debug interface of one control-plane instance, as `x internal-debug` does: over xDS (TLS,
 * a system-namespace identity; or `--plaintext` from the control plane's host) or, with
 * `--xds-address http://host:port`, its monitoring listener from the same host. The work is in
 * ca-run.ts, loaded only when the command runs.
 */
import { Command, type Options } from "@effect/cli"
import { Effect } from "effect"
import type { LogSettings } from "../../../services/logging/options.js"
import { type CaArgs, options } from "./ca-options.js"

const run = (what: "status" | "rotate-key") => (args: CaArgs) =>
  Effect.flatMap(
    Effect.promise(() => import("./ca-run.js")),
    (module) => module.runCa(what, args),
  )

export const caCommand = (logging: Options.Options<LogSettings>) =>
  Command.make("ca").pipe(
    Command.withDescription("The control plane's certificate authority: root key rotation"),
    Command.withSubcommands([
      Command.make("status", { ...options, logging }, ({ logging: _, ...args }) => run("status")(args)).pipe(
        Command.withDescription("Shows the root key rotation's phase, the roots and which agents lack the bundle"),
      ),
      Command.make("rotate-key", { ...options, logging }, ({ logging: _, ...args }) => run("rotate-key")(args)).pipe(
        Command.withDescription(
          "Rotates the self-signed root to a new key: the new root is published to every agent, then signs; the old one stays trusted until its certificates expire",
        ),
      ),
    ]),
  )
