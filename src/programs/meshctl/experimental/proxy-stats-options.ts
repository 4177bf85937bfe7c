/**
 * The options of `proxy-stats` and what its run file receives: shared by proxy-stats-command.ts (which
 * declares the command) and proxy-stats-run.ts (loaded only when it runs), so neither imports the other's types.
 */
import { type Command, Options } from "@effect/cli"
import { STATS_OUTPUTS, STATS_TYPES } from "../../../services/proxy-config/stats.js"
import { textFlag, uint16Flag } from "../../shared/options.js"
import { globalOptions } from "../global-options.js"

export const options = {
  output: Options.choice("output", STATS_OUTPUTS).pipe(
    Options.withAlias("o"),
    Options.withDefault("short" as const),
    Options.withDescription("Output format: one of json|yaml|short|prom|prom-merged"),
  ),
  proxyAdminPort: uint16Flag("proxy-admin-port", 15000).pipe(Options.withDescription("Proxy admin port")),
  selector: textFlag("selector").pipe(Options.withAlias("l"), Options.withDescription("Label selector")),
  type: Options.choice("type", STATS_TYPES).pipe(
    Options.withAlias("t"),
    Options.withDefault("server" as const),
    Options.withDescription("Where to grab the stats: one of server|clusters"),
  ),
  global: globalOptions,
}

/** What proxy-stats-run.ts receives. */
export type ProxyStatsArgs = Command.Command.ParseConfig<typeof options> & { readonly pod: string }
