/**
 * The options of `ca` and what its run file receives: shared by ca-command.ts (which
 * declares the command) and ca-run.ts (loaded only when it runs), so neither imports the other's types.
 */
import type { Command } from "@effect/cli"
import { controlPlaneOptions } from "../control-plane-options.js"
import { globalOptions } from "../global-options.js"
import { adminGroupOptions } from "./admin-options.js"

// The group's --selector/--revision choose the instance (as for admin log), not --xds-label.
const { xdsLabel: _xdsLabel, revision: _revision, ...connection } = controlPlaneOptions

/** The flags of `admin ca status` and `admin ca rotate-key`. */
export const options = { ...connection, ...adminGroupOptions, global: globalOptions }

/** What ca-run.ts receives. */
export type CaArgs = Command.Command.ParseConfig<typeof options>
