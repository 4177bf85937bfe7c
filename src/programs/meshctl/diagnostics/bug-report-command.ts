/**
 * `meshctl bug-report` (and `bug-report version`): captures cluster information, the mesh
 * namespace's configuration, the selected pods' YAML and logs, sidecar and control-plane debug
 * output into `bug-report.tar.gz` (spec part 3 §4.3 bug-report, §1 rule 5, §5 rule 4, §8). The
 * work is in bug-report-run.ts, loaded only when the command runs.
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import { buildInfo } from "../../../services/build-info.js"
import type { LogSettings } from "../../../services/logging/options.js"
import { formatVersion, makeVersionCommand } from "../../shared/version-command.js"
import { bugReportOptions } from "./bug-report-options.js"

/** `bug-report version`: the client build (the bug-report flags are accepted). */
const versionSubcommand = (logging: Options.Options<LogSettings>) =>
  makeVersionCommand(logging, Options.all(bugReportOptions), (short, output) =>
    Effect.flatMap(formatVersion(buildInfo, short, output), Console.log),
  )

/** `meshctl bug-report`. */
export const bugReportCommand = (logging: Options.Options<LogSettings>) =>
  Command.make("bug-report", { ...bugReportOptions, logging }, (args) =>
    Effect.flatMap(
      Effect.promise(() => import("./bug-report-run.js")),
      (module) => module.runBugReport(args),
    ),
  ).pipe(
    Command.withDescription(
      "Captures cluster information, mesh configuration and the selected pods' logs and proxy state into an archive",
    ),
    Command.withSubcommands([versionSubcommand(logging)]),
  )
