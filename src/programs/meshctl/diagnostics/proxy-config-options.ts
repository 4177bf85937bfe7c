/**
 * The options of `proxy-config` and what its run file receives: shared by proxy-config-command.ts (which
 * declares the command) and proxy-config-run.ts (loaded only when it runs), so neither imports the other's types.
 */
import { type Command, Options } from "@effect/cli"
import { boolFlag, intFlag, textFlag, uint16Flag } from "../../shared/options.js"
import { globalOptions } from "../global-options.js"

export const output = Options.choice("output", ["short", "json", "yaml"]).pipe(
  Options.withAlias("o"),
  Options.withDefault("short" as const),
  Options.withDescription("Output format: one of json|yaml|short"),
)
export const proxyAdminPort = uint16Flag("proxy-admin-port", 15000).pipe(Options.withDescription("Proxy admin port"))
export const file = textFlag("file").pipe(
  Options.withAlias("f"),
  Options.withDescription("Proxy config dump JSON file (no cluster is contacted)"),
)
export const port = intFlag("port", 0, { min: 0, max: 65535 })

export const common = { output, proxyAdminPort, global: globalOptions }

export const flags = {
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
