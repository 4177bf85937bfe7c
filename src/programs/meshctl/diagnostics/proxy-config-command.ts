/**
 * `meshctl proxy-config` (alias `pc`): a proxy's configuration, from a saved config dump
 * (`--file`, spec part 3 rule 6: no cluster is contacted) or from the proxy of a pod.
 * Subcommands and their aliases: cluster (clusters, c), listener (listeners, l), route (routes,
 * r), endpoint (endpoints, ep), secret (secrets, s), bootstrap (b), log (o), rootca-compare (rc),
 * all (a). @effect/cli has no command aliases, so every alias is the same command under another
 * name. The work is in proxy-config-run.ts, loaded only when a subcommand runs.
 */
import { Args, Command, type Options } from "@effect/cli"
import { Effect, Option } from "effect"
import type { LogSettings } from "../../../services/logging/options.js"
import { flags, type ProxyConfigRequest } from "./proxy-config-options.js"

export const runLazily = (request: ProxyConfigRequest) =>
  Effect.flatMap(
    Effect.promise(() => import("./proxy-config-run.js")),
    (module) => module.runProxyConfig(request),
  )

export const rootcaCompare = (name: string, logging: Options.Options<LogSettings>) =>
  Command.make(
    name,
    {
      ...flags.rootcaCompare,
      pods: Args.all([Args.text({ name: "[pod/]<name-1>[.<ns-1>]" }), Args.text({ name: "[pod/]<name-2>[.<ns-2>]" })]),
      logging,
    },
    ({ pods, logging: _, ...rest }) => runLazily({ kind: "rootcaCompare", flags: rest, pods }),
  ).pipe(Command.withDescription("Compare ROOTCA values for the two given pods (experimental)"))

const podArg = Args.text({ name: "[<type>/]<name>[.<namespace>]" }).pipe(Args.optional)

type Kind = Exclude<ProxyConfigRequest["kind"], "rootcaCompare">

const SUBCOMMANDS: ReadonlyArray<readonly [Kind, ReadonlyArray<string>, string]> = [
  ["cluster", ["cluster", "clusters", "c"], "Retrieves cluster configuration for the proxy in the specified pod"],
  ["listener", ["listener", "listeners", "l"], "Retrieves listener configuration for the proxy in the specified pod"],
  ["route", ["route", "routes", "r"], "Retrieves route configuration for the proxy in the specified pod"],
  ["endpoint", ["endpoint", "endpoints", "ep"], "Retrieves endpoint configuration for the proxy in the specified pod"],
  ["secret", ["secret", "secrets", "s"], "Retrieves secret configuration for the proxy in the specified pod"],
  ["bootstrap", ["bootstrap", "b"], "Retrieves bootstrap configuration for the proxy in the specified pod"],
  ["log", ["log", "o"], "Retrieves logging levels of the proxy in the specified pod, and can update them"],
  ["all", ["all", "a"], "Retrieves all configuration for the proxy in the specified pod"],
]

const subcommand = (kind: Kind, name: string, description: string, logging: Options.Options<LogSettings>) =>
  Command.make(name, { ...flags[kind], pod: podArg, logging }, ({ pod, logging: _, ...rest }) =>
    runLazily({ kind, flags: rest, pod: Option.getOrElse(pod, () => "") } as ProxyConfigRequest),
  ).pipe(Command.withDescription(description))

const group = (name: string, logging: Options.Options<LogSettings>) => {
  const [first, ...rest] = [
    ...SUBCOMMANDS.flatMap(([kind, names, description]) => names.map((n) => subcommand(kind, n, description, logging))),
    rootcaCompare("rootca-compare", logging),
    rootcaCompare("rc", logging),
  ]
  return Command.make(name).pipe(
    Command.withDescription(
      "A group of commands used to retrieve information about proxy configuration from the proxy config dump",
    ),
    // The list above is never empty.
    Command.withSubcommands([first!, ...rest]),
  )
}

/** `meshctl proxy-config` and its short name `meshctl pc`. */
export const proxyConfigCommands = (logging: Options.Options<LogSettings>) =>
  [group("proxy-config", logging), group("pc", logging)] as const
