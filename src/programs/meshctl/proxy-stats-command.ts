/**
 * `meshctl experimental proxy-stats` (alias `es`) `[<type>/]<name>[.<namespace>]`: a proxy's
 * statistics from its admin port (spec part 3 §4.3). The work is in proxy-stats-run.ts, loaded
 * only when the command runs.
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import type { LogSettings } from "../../services/logging/options.js"
import { STATS_OUTPUTS, STATS_TYPES } from "../../services/proxy-config/stats.js"
import { textFlag, uint16Flag } from "../shared/options.js"
import { globalOptions } from "./global-options.js"

const options = {
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

const make = (name: string, logging: Options.Options<LogSettings>) =>
  Command.make(
    name,
    { ...options, pod: Args.text({ name: "[<type>/]<name>[.<namespace>]" }).pipe(Args.optional), logging },
    ({ logging: _, ...args }) =>
      Effect.flatMap(
        Effect.promise(() => import("./proxy-stats-run.js")),
        (module) => module.runProxyStats({ ...args, pod: Option.getOrElse(args.pod, () => "") }),
      ),
  ).pipe(Command.withDescription("Retrieves the proxy's statistics for the specified pod"))

/** `meshctl x proxy-stats` and its short name `es`. */
export const proxyStatsCommands = (logging: Options.Options<LogSettings>) =>
  [make("proxy-stats", logging), make("es", logging)] as const
