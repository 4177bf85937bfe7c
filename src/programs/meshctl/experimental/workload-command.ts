/**
 * `meshctl experimental workload`: `group create` prints a WorkloadGroup, `entry configure`
 * writes the files a VM needs to join the mesh as a member of one (spec part 3 §4.3, §5 rule 5).
 * The work is in workload-run.ts, loaded only when a command runs.
 */
import { Command, type Options } from "@effect/cli"
import { Effect } from "effect"
import type { LogSettings } from "../../../services/logging/options.js"
import { entryOptions, groupOptions } from "./workload-options.js"

const load = () => import("./workload-run.js")

export const workloadCommand = (logging: Options.Options<LogSettings>) =>
  Command.make("workload").pipe(
    Command.withDescription(
      "Commands to assist in configuring and deploying workloads running on VMs and other non-orchestrated environments",
    ),
    Command.withSubcommands([
      Command.make("group").pipe(
        Command.withDescription("Commands dealing with WorkloadGroup resources"),
        Command.withSubcommands([
          Command.make("create", { ...groupOptions, logging }, (args) =>
            Effect.flatMap(Effect.promise(load), (module) => module.runWorkloadGroupCreate(args)),
          ).pipe(
            Command.withDescription(
              "Creates a WorkloadGroup resource that provides a template for associated WorkloadEntries",
            ),
          ),
        ]),
      ),
      Command.make("entry").pipe(
        Command.withDescription("Commands dealing with WorkloadEntry resources"),
        Command.withSubcommands([
          Command.make("configure", { ...entryOptions, logging }, (args) =>
            Effect.flatMap(Effect.promise(load), (module) => module.runWorkloadEntryConfigure(args)),
          ).pipe(
            Command.withDescription(
              "Generates all the required configuration files for a workload instance running on a VM or non-orchestrated environment",
            ),
          ),
        ]),
      ),
    ]),
  )
