/**
 * The options of `waypoint` and what its run file receives: shared by waypoint-command.ts (which
 * declares the command) and waypoint-run.ts (loaded only when it runs), so neither imports the other's types.
 */
import { type Command, Options } from "@effect/cli"
import {
  DEFAULT_TRAFFIC_TYPE,
  DEFAULT_WAYPOINT_NAME,
  TRAFFIC_TYPES,
} from "../../../services/gateway-api/waypoints/names.js"
import { boolFlag, durationFlag, textFlag } from "../../shared/options.js"
import { globalOptions } from "../global-options.js"

export const name = textFlag("name", DEFAULT_WAYPOINT_NAME).pipe(Options.withDescription("The name of the waypoint"))
export const trafficType = textFlag("for", DEFAULT_TRAFFIC_TYPE).pipe(
  Options.withDescription(`Specify the traffic type [${TRAFFIC_TYPES.join(" ")}] for the waypoint`),
)
export const revision = textFlag("revision").pipe(
  Options.withAlias("r"),
  Options.withDescription("The revision to label the waypoint with"),
)
export const waypointTimeout = durationFlag("waypoint-timeout", "1m30s").pipe(
  Options.withDescription("Timeout for waiting for waypoint ready"),
)

export const generateOptions = { name, trafficType, revision, global: globalOptions }
export type WaypointGenerateArgs = Command.Command.ParseConfig<typeof generateOptions>

export const applyOptions = {
  ...generateOptions,
  enrollNamespace: boolFlag("enroll-namespace").pipe(
    Options.withDescription("If set, the namespace will be labeled with the waypoint name"),
  ),
  overwrite: boolFlag("overwrite").pipe(
    Options.withDescription("Overwrite the existing Waypoint configuration, if applicable"),
  ),
  wait: boolFlag("wait").pipe(Options.withAlias("w"), Options.withDescription("Wait for the waypoint to be ready")),
  waypointTimeout,
}
export type WaypointApplyArgs = Command.Command.ParseConfig<typeof applyOptions>

export const deleteOptions = {
  name,
  all: boolFlag("all").pipe(Options.withDescription("Delete all waypoints in the namespace")),
  revision: textFlag("revision").pipe(
    Options.withAlias("r"),
    Options.withDescription("With --all, delete only the waypoints of this revision"),
  ),
  global: globalOptions,
}
export type WaypointDeleteArgs = Command.Command.ParseConfig<typeof deleteOptions> & {
  readonly names: ReadonlyArray<string>
}

export const listOptions = {
  name,
  allNamespaces: boolFlag("all-namespaces").pipe(
    Options.withAlias("A"),
    Options.withDescription("List all waypoints in all namespaces"),
  ),
  global: globalOptions,
}
export type WaypointListArgs = Command.Command.ParseConfig<typeof listOptions>

export const statusOptions = { name, waypointTimeout, global: globalOptions }
export type WaypointStatusArgs = Command.Command.ParseConfig<typeof statusOptions>
