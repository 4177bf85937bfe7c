/**
 * `meshctl experimental proxy-stats` (alias `es`) `[<type>/]<name>[.<namespace>]`: a proxy's
 * statistics from its admin port (spec part 3 §4.3). The work is in proxy-stats-run.ts, loaded
 * only when the command runs.
 */
import { Args, Command, type Options } from "@effect/cli"
import { Effect, Option } from "effect"
import type { LogSettings } from "../../../services/logging/options.js"
import { options } from "./proxy-stats-options.js"

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
