/**
 * The logging flags every command of every binary accepts (spec part 1 §4.3, part 2 §4.5),
 * validated against the binary's own scopes, and the layer they configure.
 */
import { Options } from "@effect/cli"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as ValidationError from "@effect/cli/ValidationError"
import { Effect, Either } from "effect"
import { type LogSettings, resolveLogSettings } from "../../services/logging/options.js"
import { LOG_LEVELS } from "../../services/logging/scopes.js"
import { boolFlag, intFlag, textFlag, withNote } from "./options.js"

const levels = LOG_LEVELS.join(", ")

/** The logging flags, resolved to LogSettings for a binary whose scopes are `scopes`. */
export const loggingOptions = (scopes: ReadonlyArray<string>): Options.Options<LogSettings> =>
  Options.all({
    asJson: boolFlag("log_as_json").pipe(
      Options.withDescription("Whether to format output as JSON or in plain console-friendly format"),
    ),
    caller: textFlag("log_caller").pipe(
      Options.withDescription(
        `Comma-separated list of scopes for which to include caller information, scopes can be any of [${scopes.join(", ")}]`,
      ),
    ),
    outputLevel: textFlag("log_output_level").pipe(
      Options.withDescription(
        `Comma-separated minimum per-scope logging level of messages to output, in the form of <scope>:<level>,<scope>:<level>,... where scope can be one of [${scopes.join(", ")}] and level can be one of [${levels}]`,
      ),
    ),
    stackTraceLevel: textFlag("log_stacktrace_level", "default:none").pipe(
      Options.withDescription(
        `Comma-separated minimum per-scope logging level at which stack traces are captured, in the form of <scope>:<level>,<scope>:<level>,... where scope can be one of [${scopes.join(", ")}] and level can be one of [${levels}]`,
      ),
    ),
    targets: Options.text("log_target").pipe(
      Options.repeated,
      withNote({ default: "stdout" }),
      Options.withDescription(
        "The set of paths where to output the log. This can be any path as well as the special values stdout and stderr (default [stdout])",
      ),
    ),
    vklog: intFlag("vklog", 0, { min: 0 }).pipe(
      Options.withPseudoName("Level"),
      Options.withDescription("number for the log level verbosity. Like -v flag. ex: --vklog=9"),
    ),
  }).pipe(
    Options.mapEffect((raw) =>
      Either.match(resolveLogSettings(raw, scopes), {
        onLeft: (message) => Effect.fail(ValidationError.invalidValue(HelpDoc.p(message))),
        onRight: Effect.succeed,
      }),
    ),
  )
