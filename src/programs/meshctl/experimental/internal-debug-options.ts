/**
 * The options of `internal-debug` and what its run file receives: shared by internal-debug-command.ts (which
 * declares the command) and internal-debug-run.ts (loaded only when it runs), so neither imports the other's types.
 */
import { type Command, Options } from "@effect/cli"
import { boolFlag } from "../../shared/options.js"
import { controlPlaneOptions } from "../control-plane-options.js"
import { globalOptions } from "../global-options.js"

export const options = {
  ...controlPlaneOptions,
  all: boolFlag("all").pipe(
    Options.withDescription("Send the same request to all control-plane instances (in-cluster only)"),
  ),
  global: globalOptions,
}

/** What internal-debug-run.ts receives. */
export type InternalDebugArgs = Command.Command.ParseConfig<typeof options> & { readonly type: string }
