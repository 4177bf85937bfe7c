/**
 * `meshctl proxy-config` (alias `pc`): a proxy's configuration, from a saved config dump
 * (`--file`, spec part 3 rule 6: no cluster is contacted) or from the proxy of a pod.
 * Subcommands and their aliases: cluster (clusters, c), listener (listeners, l), route (routes,
 * r), endpoint (endpoints, ep), secret (secrets, s), bootstrap (b), log (o), rootca-compare (rc),
 * all (a). @effect/cli has no command aliases, so every alias is the same command under another
 * name. The work is in proxy-config-run.ts, loaded only when a subcommand runs.
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import type { LogSettings } from "../../services/logging/options.js"
import { boolFlag, intFlag, textFlag, uint16Flag } from "../shared/options.js"
import { globalOptions } from "./global-options.js"

const output = Options.choice("output", ["short", "json", "yaml"]).pipe(
  Options.withAlias("o"),
  Options.withDefault("short" as const),
  Options.withDescription("Output format: one of json|yaml|short"),
)
const proxyAdminPort = uint16Flag("proxy-admin-port", 15000).pipe(Options.withDescription("Proxy admin port"))
const file = textFlag("file").pipe(
  Options.withAlias("f"),
  Options.withDescription("Proxy config dump JSON file (no cluster is contacted)"),
)
const port = intFlag("port", 0, { min: 0, max: 65535 })
const podArg = Args.text({ name: "[<type>/]<name>[.<namespace>]" }).pipe(Args.optional)

const common = { output, proxyAdminPort, global: globalOptions }

const flags = {
  cluster: {
    ...common,
    file,
    fqdn: textFlag("fqdn").pipe(Options.withDescription("Filter clusters by substring of Service FQDN field")),
    port: port.pipe(Options.withDescription("Filter clusters by Port field")),
    subset: textFlag("subset").pipe(Options.withDescription("Filter clusters by substring of Subset field")),
    direction: textFlag("direction").pipe(Options.withDescription("Filter clusters by Direction field")),
  },
  listener: {
    ...common,
    file,
    address: textFlag("address").pipe(Options.withDescription("Filter listeners by address field")),
    port: port.pipe(Options.withDescription("Filter listeners by Port field")),
    type: textFlag("type").pipe(Options.withDescription("Filter listeners by type field (HTTP, TCP, HTTP+TCP)")),
    waypoint: boolFlag("waypoint").pipe(Options.withDescription("Waypoint proxy (accepted; same tables)")),
    verbose: boolFlag("verbose", true).pipe(Options.withDescription("Output more information")),
  },
  route: {
    ...common,
    file,
    name: textFlag("name").pipe(Options.withDescription("Filter routes by route name field")),
    verbose: boolFlag("verbose", true).pipe(Options.withDescription("Output more information")),
  },
  endpoint: {
    ...common,
    file: textFlag("file").pipe(
      Options.withAlias("f"),
      Options.withDescription("Proxy clusters JSON file (/clusters?format=json) or config dump JSON file"),
    ),
    address: textFlag("address").pipe(Options.withDescription("Filter endpoints by address field")),
    port: port.pipe(Options.withDescription("Filter endpoints by Port field")),
    cluster: textFlag("cluster").pipe(Options.withDescription("Filter endpoints by cluster name field")),
    status: textFlag("status").pipe(Options.withDescription("Filter endpoints by status field")),
  },
  secret: { ...common, file },
  bootstrap: { ...common, file },
  all: {
    ...common,
    file,
    address: textFlag("address").pipe(Options.withDescription("Filter listeners by address field")),
    direction: textFlag("direction").pipe(Options.withDescription("Filter clusters by Direction field")),
    fqdn: textFlag("fqdn").pipe(Options.withDescription("Filter clusters by substring of Service FQDN field")),
    name: textFlag("name").pipe(Options.withDescription("Filter routes by route name field")),
    port: port.pipe(Options.withDescription("Filter clusters and listeners by Port field")),
    subset: textFlag("subset").pipe(Options.withDescription("Filter clusters by substring of Subset field")),
    type: textFlag("type").pipe(Options.withDescription("Filter listeners by type field")),
    verbose: boolFlag("verbose", true).pipe(Options.withDescription("Output more information")),
  },
  log: {
    ...common,
    level: textFlag("level").pipe(
      Options.withDescription(
        "Comma-separated minimum per-logger level of messages to output, in the form of [<logger>:]<level>,[<logger>:]<level>,... where logger can be one of the proxy's loggers and level can be one of [trace, debug, info, warning, error, critical, off]",
      ),
    ),
    reset: boolFlag("reset").pipe(
      Options.withAlias("r"),
      Options.withDescription("Reset levels to default value (warning)."),
    ),
    selector: textFlag("selector").pipe(Options.withAlias("l"), Options.withDescription("Label selector")),
  },
  rootcaCompare: common,
} as const

export type Flags<K extends keyof typeof flags> = Command.Command.ParseConfig<(typeof flags)[K]>

/** What proxy-config-run.ts receives: the subcommand, its flags and its pod arguments. */
export type ProxyConfigRequest =
  | { readonly kind: "cluster"; readonly flags: Flags<"cluster">; readonly pod: string }
  | { readonly kind: "listener"; readonly flags: Flags<"listener">; readonly pod: string }
  | { readonly kind: "route"; readonly flags: Flags<"route">; readonly pod: string }
  | { readonly kind: "endpoint"; readonly flags: Flags<"endpoint">; readonly pod: string }
  | { readonly kind: "secret"; readonly flags: Flags<"secret">; readonly pod: string }
  | { readonly kind: "bootstrap"; readonly flags: Flags<"bootstrap">; readonly pod: string }
  | { readonly kind: "all"; readonly flags: Flags<"all">; readonly pod: string }
  | { readonly kind: "log"; readonly flags: Flags<"log">; readonly pod: string }
  | { readonly kind: "rootcaCompare"; readonly flags: Flags<"rootcaCompare">; readonly pods: readonly [string, string] }

const runLazily = (request: ProxyConfigRequest) =>
  Effect.flatMap(
    Effect.promise(() => import("./proxy-config-run.js")),
    (module) => module.runProxyConfig(request),
  )

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

const rootcaCompare = (name: string, logging: Options.Options<LogSettings>) =>
  Command.make(
    name,
    {
      ...flags.rootcaCompare,
      pods: Args.all([Args.text({ name: "[pod/]<name-1>[.<ns-1>]" }), Args.text({ name: "[pod/]<name-2>[.<ns-2>]" })]),
      logging,
    },
    ({ pods, logging: _, ...rest }) => runLazily({ kind: "rootcaCompare", flags: rest, pods }),
  ).pipe(Command.withDescription("Compare ROOTCA values for the two given pods (experimental)"))

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
