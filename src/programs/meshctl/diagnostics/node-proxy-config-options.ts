/**
 * The options of `node-proxy-config` and what its run file receives: shared by node-proxy-config-command.ts (which
 * declares the command) and node-proxy-config-run.ts (loaded only when it runs), so neither imports the other's types.
 */
import { type Command, Options } from "@effect/cli"
import { boolFlag, textFlag, uint16Flag } from "../../shared/options.js"
import { globalOptions } from "../global-options.js"

export const common = {
  file: textFlag("file").pipe(Options.withAlias("f"), Options.withDescription("Node proxy config dump JSON file")),
  node: textFlag("node").pipe(
    Options.withDescription("Filter workloads by node field (and read the node proxy on that node)"),
  ),
  output: Options.choice("output", ["short", "json", "yaml"]).pipe(
    Options.withAlias("o"),
    Options.withDefault("short" as const),
    Options.withDescription("Output format: one of json|yaml|short"),
  ),
  proxyAdminPort: uint16Flag("proxy-admin-port", 15000).pipe(Options.withDescription("Node proxy admin port")),
  global: globalOptions,
}

export const flags = {
  all: common,
  certificate: common,
  connections: {
    ...common,
    direction: textFlag("direction").pipe(
      Options.withDescription("Filter workloads by direction (inbound or outbound)"),
    ),
    raw: boolFlag("raw").pipe(Options.withDescription("If set, show IP addresses instead of names")),
    workloadNamespace: textFlag("workload-namespace").pipe(
      Options.withDescription("Filter workloads by namespace field"),
    ),
  },
} as const

export type NodeProxyFlags<K extends keyof typeof flags> = Command.Command.ParseConfig<(typeof flags)[K]>

/** What node-proxy-config-run.ts receives: the subcommand, its flags and its pod argument ("" for none). */
export type NodeProxyConfigRequest =
  | { readonly kind: "all"; readonly flags: NodeProxyFlags<"all">; readonly pod: string }
  | { readonly kind: "certificate"; readonly flags: NodeProxyFlags<"certificate">; readonly pod: string }
  | { readonly kind: "connections"; readonly flags: NodeProxyFlags<"connections">; readonly pod: string }
