/**
 * `meshctl experimental metrics <workload>...` (alias `m`): requests per second, error rate and
 * latency percentiles per workload from the mesh's Prometheus (spec part 3 §4.3, §8). The work
 * is in metrics-run.ts, loaded only when the command runs.
 */
import { Args, Command, type Options } from "@effect/cli"
import { Effect } from "effect"
import type { LogSettings } from "../../../services/logging/options.js"
import { options } from "./metrics-options.js"

const make = (name: string, logging: Options.Options<LogSettings>) =>
  Command.make(
    name,
    {
      ...options,
      workloads: Args.text({ name: "workload name" }).pipe(
        Args.withDescription("<name>[.<namespace>] of a workload"),
        Args.atLeast(1),
      ),
      logging,
    },
    ({ logging: _, ...args }) =>
      Effect.flatMap(
        Effect.promise(() => import("./metrics-run.js")),
        (module) => module.runMetrics(args),
      ),
  ).pipe(Command.withDescription("Prints the metrics for the specified workload(s) when running in the orchestrator"))

/** `meshctl x metrics` and its short name `m`. */
export const metricsCommands = (logging: Options.Options<LogSettings>) =>
  [make("metrics", logging), make("m", logging)] as const
