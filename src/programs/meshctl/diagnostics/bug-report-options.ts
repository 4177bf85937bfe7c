/**
 * The options of `bug-report` and what its run file receives: shared by bug-report-command.ts (which
 * declares the command) and bug-report-run.ts (loaded only when it runs), so neither imports the other's types.
 */
import { type Command, Options } from "@effect/cli"
import { Effect, Either } from "effect"
import { DEFAULT_EXCLUDE } from "../../../services/bug-report/filter.js"
import { parseGoDuration } from "../../../services/config/duration.js"
import { SYSTEM_NAMESPACE } from "../../../services/constants.js"
import { boolFlag, intFlag, invalidFlag, listFlag, textFlag, withNote } from "../../shared/options.js"
import { globalOptions } from "../global-options.js"

/** A filter list: repeatable, NOT split on commas (commas separate alternatives inside a filter). */
export const filterList = (name: string, defaultValue: ReadonlyArray<string>) =>
  Options.text(name).pipe(
    Options.repeated,
    withNote({ default: defaultValue.length === 0 ? "none" : defaultValue.join(" ") }),
    Options.map((values) => (values.length === 0 ? [...defaultValue] : values)),
  )

/**
 * A duration flag kept as typed (a `--filename` config file may still replace it, as text), but
 * refused on the command line when it is not a Go duration.
 */
export const durationText = (name: string, defaultValue: string) =>
  textFlag(name, defaultValue).pipe(
    Options.mapEffect((text) =>
      Either.match(parseGoDuration(text), {
        onLeft: (reason) =>
          Effect.fail(invalidFlag(`--${name}: ${reason} (expected a duration such as 30s, 5m or 1h0m0s)`)),
        onRight: () => Effect.succeed(text),
      }),
    ),
    Options.withPseudoName("duration"),
  )

export const FILTER_HELP =
  "ns/dep/pod/labels/annotations/container: comma-separated alternatives per part, trailing parts omittable, '*' globs on names (not on label/annotation keys). Repeat the flag for more filters (commas do not separate filters)."

export const bugReportOptions = {
  criticalErrs: listFlag("critical-errs").pipe(
    Options.withDescription("List of comma-separated glob patterns; a log matching one gets top priority"),
  ),
  dir: textFlag("dir").pipe(Options.withDescription("Directory for temporary artifacts (default: a new temp dir)")),
  dryRun: boolFlag("dry-run").pipe(Options.withDescription("Only log the commands to run, write nothing")),
  duration: durationText("duration", "0s").pipe(
    Options.withDescription("How far back from the end time to collect logs; exclusive with --start-time"),
  ),
  endTime: textFlag("end-time").pipe(Options.withDescription("End of the log window (RFC 3339; default now)")),
  exclude: filterList("exclude", DEFAULT_EXCLUDE).pipe(
    Options.withDescription(
      `Pods/containers to leave out, after --include: ${FILTER_HELP} (default: ${DEFAULT_EXCLUDE.join(" ")})`,
    ),
  ),
  filename: textFlag("filename").pipe(
    Options.withAlias("f"),
    Options.withDescription("YAML config file applied over defaults and flags (lists replaced)"),
  ),
  fullSecrets: boolFlag("full-secrets").pipe(Options.withDescription("Include the contents of Secrets")),
  ignoreErrs: listFlag("ignore-errs").pipe(
    Options.withDescription("List of comma-separated glob patterns of log lines the importance heuristic ignores"),
  ),
  include: filterList("include", []).pipe(
    Options.withDescription(`Pods/containers to capture: ${FILTER_HELP} (default: all)`),
  ),
  // Empty when not given, so that -i/--meshNamespace can stand in; either way mesh-system by default.
  meshNamespace: textFlag("mesh-namespace").pipe(
    withNote({ default: SYSTEM_NAMESPACE }),
    Options.withDescription("Mesh system namespace (when not given: -i/--meshNamespace)"),
  ),
  outputDir: textFlag("output-dir").pipe(Options.withDescription("Where to write the archive (default: cwd)")),
  rqConcurrency: intFlag("rq-concurrency", 0, { min: 0 }).pipe(
    Options.withDescription("Parallel requests to the cluster and the proxies; 0 means 32"),
  ),
  startTime: textFlag("start-time").pipe(Options.withDescription("Start of the log window (RFC 3339)")),
  timeout: durationText("timeout", "30m0s").pipe(
    Options.withDescription("Maximum run time; on expiry what was captured so far is archived"),
  ),
  global: globalOptions,
}

export type BugReportArgs = Command.Command.ParseConfig<typeof bugReportOptions>
