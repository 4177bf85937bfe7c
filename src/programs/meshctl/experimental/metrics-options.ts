/**
 * The options of `metrics` and what its run file receives: shared by metrics-command.ts (which
 * declares the command) and metrics-run.ts (loaded only when it runs), so neither imports the other's types.
 */
import { type Command, Options } from "@effect/cli"
import { durationFlag } from "../../shared/options.js"
import { globalOptions } from "../global-options.js"

export const options = {
  duration: durationFlag("duration", "1m0s").pipe(
    Options.withAlias("d"),
    Options.withDescription("Duration of query metrics, default value is 1m."),
  ),
  global: globalOptions,
}

/** What metrics-run.ts receives. */
export type MetricsArgs = Command.Command.ParseConfig<typeof options> & { readonly workloads: ReadonlyArray<string> }
