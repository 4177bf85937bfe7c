/**
 * `meshctl proxy-status [<type>/]<name>[.<namespace>]` (alias `ps`, also `experimental
 * proxy-status`): the last sent and last acknowledged xDS push of every connected proxy (spec
 * part 3 §4.2, §4.3). With a name, the comparison of what the control plane would send that proxy
 * with what it holds (`-o json`: its status only). The work is in proxy-status-run.ts, loaded only
 * when the command runs.
 */
import { Args, Command, type Options } from "@effect/cli"
import { Effect, Option } from "effect"
import type { LogSettings } from "../../../services/logging/options.js"
import { options } from "./proxy-status-options.js"

const proxyArg = Args.text({ name: "name" }).pipe(
  Args.withDescription("a proxy: its pod (optionally type/ and .namespace) or its node id"),
  Args.optional,
)

const make = (name: string, logging: Options.Options<LogSettings>) =>
  Command.make(name, { ...options, proxy: proxyArg, logging }, (args) =>
    Effect.flatMap(
      Effect.promise(() => import("./proxy-status-run.js")),
      (module) => module.runProxyStatus({ ...args, proxy: Option.getOrElse(args.proxy, () => "") }),
    ),
  ).pipe(
    Command.withDescription(
      "Retrieves the last sent and last acknowledged xDS sync from the control plane to each proxy in the mesh",
    ),
  )

/** `meshctl proxy-status`. */
export const proxyStatusCommand = (logging: Options.Options<LogSettings>) => make("proxy-status", logging)
/** `meshctl ps`: the same command under its short name (@effect/cli has no command aliases). */
export const proxyStatusAliasCommand = (logging: Options.Options<LogSettings>) => make("ps", logging)
