/**
 * The options of `verify-install` and what its run file receives: shared by verify-install-command.ts (which
 * declares the command) and verify-install-run.ts (loaded only when it runs), so neither imports the other's types.
 */
import type { Command } from "@effect/cli"
import { globalOptions } from "../global-options.js"
import { operatorOptions } from "./install-options.js"

const { dryRun: _dryRun, ...operator } = operatorOptions

/** The flags of `verify-install`: the operator resource (without `--dry-run`) and the global ones. */
export const options = { ...operator, global: globalOptions }

/** What verify-install-run.ts receives. */
export type VerifyInstallArgs = Command.Command.ParseConfig<typeof options>
