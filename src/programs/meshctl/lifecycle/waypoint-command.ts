/**
 * `meshctl waypoint`: waypoints, Gateways of class `mesh-waypoint` (spec part 3 §2, §3, §4.3):
 * `generate` prints one, `apply` writes it (optionally enrolling the namespace and waiting until
 * it is Programmed), `delete` removes them, `list` shows them, `status` waits for readiness.
 * The reference's group-wide `--name` is on each subcommand (@effect/cli reads a parent's
 * flags only before the subcommand's name), `list` included, which accepts it as the reference
 * does and lists every waypoint regardless. The work is in waypoint-run.ts, loaded lazily.
 */
import { Args, Command, type Options } from "@effect/cli"
import { Effect } from "effect"
import type { LogSettings } from "../../../services/logging/options.js"
import { applyOptions, deleteOptions, generateOptions, listOptions, statusOptions } from "./waypoint-options.js"

const namesArg = Args.text({ name: "name" }).pipe(Args.withDescription("waypoints to delete"), Args.repeated)

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
