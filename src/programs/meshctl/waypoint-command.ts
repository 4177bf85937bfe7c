/**
 * `meshctl waypoint`: waypoints, Gateways of class `mesh-waypoint` (spec part 3 §2, §3, §4.3):
 * `generate` prints one, `apply` writes it (optionally enrolling the namespace and waiting until
 * it is Programmed), `delete` removes them, `list` shows them, `status` waits for readiness.
 * The reference's group-wide `--name` is on each subcommand (@effect/cli reads a parent's
 * flags only before the subcommand's name), `list` included, which accepts it as the reference
 * does and lists every waypoint regardless. The work is in waypoint-run.ts, loaded lazily.
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect } from "effect"
import type { LogSettings } from "../../services/logging/options.js"
import { DEFAULT_TRAFFIC_TYPE, DEFAULT_WAYPOINT_NAME, TRAFFIC_TYPES } from "../../services/waypoints/names.js"
import { boolFlag, durationFlag, textFlag } from "../shared/options.js"
import { globalOptions } from "./global-options.js"

const name = textFlag("name", DEFAULT_WAYPOINT_NAME).pipe(Options.withDescription("The name of the waypoint"))
const trafficType = textFlag("for", DEFAULT_TRAFFIC_TYPE).pipe(
  Options.withDescription(`Specify the traffic type [${TRAFFIC_TYPES.join(" ")}] for the waypoint`),
)
const revision = textFlag("revision").pipe(
  Options.withAlias("r"),
  Options.withDescription("The revision to label the waypoint with"),
)
const waypointTimeout = durationFlag("waypoint-timeout", "1m30s").pipe(
  Options.withDescription("Timeout for waiting for waypoint ready"),
)

const generateOptions = { name, trafficType, revision, global: globalOptions }
export type WaypointGenerateArgs = Command.Command.ParseConfig<typeof generateOptions>

const applyOptions = {
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

const deleteOptions = {
  name,
  all: boolFlag("all").pipe(Options.withDescription("Delete all waypoints in the namespace")),
  revision: textFlag("revision").pipe(
    Options.withAlias("r"),
    Options.withDescription("With --all, delete only the waypoints of this revision"),
  ),
  global: globalOptions,
}
const namesArg = Args.text({ name: "name" }).pipe(Args.withDescription("waypoints to delete"), Args.repeated)
export type WaypointDeleteArgs = Command.Command.ParseConfig<typeof deleteOptions> & {
  readonly names: ReadonlyArray<string>
}

const listOptions = {
  name,
  allNamespaces: boolFlag("all-namespaces").pipe(
    Options.withAlias("A"),
    Options.withDescription("List all waypoints in all namespaces"),
  ),
  global: globalOptions,
}
export type WaypointListArgs = Command.Command.ParseConfig<typeof listOptions>

const statusOptions = { name, waypointTimeout, global: globalOptions }
export type WaypointStatusArgs = Command.Command.ParseConfig<typeof statusOptions>

const runModule = () => Effect.promise(() => import("./waypoint-run.js"))

/** `meshctl waypoint`. */
export const waypointCommand = (logging: Options.Options<LogSettings>) =>
  Command.make("waypoint").pipe(
    Command.withDescription("Manage waypoint configuration"),
    Command.withSubcommands([
      Command.make("generate", { ...generateOptions, logging }, (args) =>
        Effect.flatMap(runModule(), (m) => m.runWaypointGenerate(args)),
      ).pipe(Command.withDescription("Generate a waypoint configuration as YAML")),
      Command.make("apply", { ...applyOptions, logging }, (args) =>
        Effect.flatMap(runModule(), (m) => m.runWaypointApply(args)),
      ).pipe(Command.withDescription("Apply a waypoint configuration to the cluster")),
      Command.make("delete", { ...deleteOptions, names: namesArg, logging }, (args) =>
        Effect.flatMap(runModule(), (m) => m.runWaypointDelete(args)),
      ).pipe(Command.withDescription("Delete waypoint configurations from the cluster")),
      Command.make("list", { ...listOptions, logging }, (args) =>
        Effect.flatMap(runModule(), (m) => m.runWaypointList(args)),
      ).pipe(Command.withDescription("List managed waypoint configurations in the cluster")),
      Command.make("status", { ...statusOptions, logging }, (args) =>
        Effect.flatMap(runModule(), (m) => m.runWaypointStatus(args)),
      ).pipe(Command.withDescription("Wait until a waypoint is ready (Programmed)")),
    ]),
  )
