/**
 * The options of `authz` and what its run file receives: shared by authz-command.ts (which
 * declares the command) and authz-run.ts (loaded only when it runs), so neither imports the other's types.
 */
import { type Command, Options } from "@effect/cli"
import { textFlag, uint16Flag } from "../../shared/options.js"
import { globalOptions } from "../global-options.js"

export const checkOptions = {
  file: textFlag("file").pipe(
    Options.withAlias("f"),
    Options.withDescription("The json file with the proxy config dump (no cluster is contacted)"),
  ),
  proxyAdminPort: uint16Flag("proxy-admin-port", 15000).pipe(Options.withDescription("Proxy admin port")),
  global: globalOptions,
}

/** What authz-run.ts receives. */
export type AuthzCheckArgs = Command.Command.ParseConfig<typeof checkOptions> & { readonly pod: string }
