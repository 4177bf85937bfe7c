/**
 * `meshctl node-proxy-config`: a node proxy's configuration (the reference's `ztunnel-config`),
 * from a saved admin config dump (`--file`) or from a node proxy through the orchestrator: the
 * one a pod argument names (a node proxy pod, or a workload pod, whose node's proxy is read), the
 * one on `--node`, else the first one running. Subcommands (spec part 3 §4.2): `all`,
 * `certificate` (`certificates`, `certs`, `cert`) and `connections` (`cons`); @effect/cli has no
 * command aliases, so every alias is the same command under another name. The work is in
 * node-proxy-config-run.ts, loaded only when a subcommand runs.
 */
import { Args, Command, type Options } from "@effect/cli"
import { Effect, Option } from "effect"
import type { LogSettings } from "../../../services/logging/options.js"
import { flags, type NodeProxyConfigRequest } from "./node-proxy-config-options.js"

type Kind = NodeProxyConfigRequest["kind"]

const SUBCOMMANDS: ReadonlyArray<readonly [Kind, ReadonlyArray<string>, string]> = [
  ["all", ["all"], "Retrieves all configuration for the specified node proxy pod"],
  [
    "certificate",
    ["certificate", "certificates", "certs", "cert"],
    "Retrieves certificate for the specified node proxy pod",
  ],
  ["connections", ["connections", "cons"], "Retrieves connections for the specified node proxy pod"],
]

const podArg = Args.text({ name: "[<type>/]<name>[.<namespace>]" }).pipe(Args.optional)

const runLazily = (request: NodeProxyConfigRequest) =>
  Effect.flatMap(
    Effect.promise(() => import("./node-proxy-config-run.js")),
    (module) => module.runNodeProxyConfig(request),
  )

const subcommand = (kind: Kind, name: string, description: string, logging: Options.Options<LogSettings>) =>
  Command.make(name, { ...flags[kind], pod: podArg, logging }, ({ pod, logging: _, ...rest }) =>
    runLazily({ kind, flags: rest, pod: Option.getOrElse(pod, () => "") } as NodeProxyConfigRequest),
  ).pipe(Command.withDescription(description))

/** `meshctl node-proxy-config`. */
export const nodeProxyConfigCommand = (logging: Options.Options<LogSettings>) => {
  const [first, ...rest] = SUBCOMMANDS.flatMap(([kind, names, description]) =>
    names.map((name) => subcommand(kind, name, description, logging)),
  )
  return Command.make("node-proxy-config").pipe(
    Command.withDescription("Update or retrieve current node proxy configuration (from its admin config dump)"),
    // The list above is never empty.
    Command.withSubcommands([first!, ...rest]),
  )
}
