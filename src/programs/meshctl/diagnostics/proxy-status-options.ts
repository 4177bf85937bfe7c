/**
 * The options of `proxy-status` and what its run file receives: shared by proxy-status-command.ts (which
 * declares the command) and proxy-status-run.ts (loaded only when it runs), so neither imports the other's types.
 */
import { type Command, Options } from "@effect/cli"
import type { Option } from "effect"
import { intFlag, textFlag } from "../../shared/options.js"
import { controlPlaneOptions } from "../control-plane-options.js"
import { globalOptions } from "../global-options.js"

export const options = {
  ...controlPlaneOptions,
  file: textFlag("file").pipe(
    Options.withDescription("Proxy config dump JSON file (compared with the control plane instead of the live proxy)"),
  ),
  output: Options.choice("output", ["table", "json"]).pipe(
    Options.withAlias("o"),
    Options.withDefault("table" as const),
    Options.withDescription("Output format: one of json|table"),
  ),
  verbosity: intFlag("verbosity", 0, { min: 0 }).pipe(
    Options.withAlias("v"),
    Options.withDescription("Output verbosity level; 1 shows every xDS type"),
  ),
  global: globalOptions,
}

export type Parsed = Command.Command.ParseConfig<typeof options> & { readonly proxy: Option.Option<string> }

/** The command's inputs, as proxy-status-run.ts reads them. */
export type ProxyStatusArgs = Omit<Parsed, "proxy"> & { readonly proxy: string }
