/**
 * Runs a binary's command tree: parses argv, provides the CLI's platform services, turns
 * usage errors and start-up failures into a clear message on stderr and a non-zero exit, and
 * bounds graceful shutdown after SIGTERM/SIGINT.
 */
import { type CliApp, CliConfig, Command } from "@effect/cli"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import { Cause, ConfigError, Effect, Exit, Layer } from "effect"
import { buildInfo } from "../../services/build-info.js"
import { describeConfigError } from "../../services/config/env.js"

/** Exit code of usage errors (unknown flag, bad value): the reference's CLI library uses 1. */
export const USAGE_EXIT_CODE = 1
/** Exit code of a failure after the command line was accepted (bad environment, bind error, ...). */
export const FAILURE_EXIT_CODE = 1

// Built-in options (--completions, --wizard, ...) still work but stay out of the help pages.
const cliEnvironment = Layer.mergeAll(
  NodeFileSystem.layer,
  NodePath.layer,
  NodeTerminal.layer,
  CliConfig.layer({ showBuiltIns: false }),
)

const describeFailure = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (failure._tag === "Some") {
    const error = failure.value
    if (ConfigError.isConfigError(error)) return `invalid configuration:\n  ${describeConfigError(error).join("\n  ")}`
    if (error instanceof Error) return error.message
    if (typeof error === "object" && error !== null && "message" in error) return String(error.message)
    return String(error)
  }
  return Cause.pretty(cause)
}

export const runCli = <Name extends string, E, A>(
  programName: string,
  root: Command.Command<Name, CliApp.CliApp.Environment, E, A>,
): void => {
  const cli = Command.run(root, { name: programName, version: buildInfo.version })
  const program = Effect.suspend(() => cli(process.argv)).pipe(
    Effect.provide(cliEnvironment),
    Effect.exit,
    Effect.flatMap((exit) =>
      Effect.sync(() => {
        if (Exit.isSuccess(exit) || Exit.isInterrupted(exit)) return
        const failure = Cause.failureOption(exit.cause)
        if (failure._tag === "Some" && ValidationError.isValidationError(failure.value)) {
          // @effect/cli has already printed the usage error.
          process.exitCode = USAGE_EXIT_CODE
          return
        }
        process.stderr.write(`Error: ${describeFailure(exit.cause)}\n`)
        process.exitCode = FAILURE_EXIT_CODE
      }),
    ),
  )
  NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
}

/**
 * Bounds graceful shutdown: once SIGTERM or SIGINT arrives, the process exits after `millis`
 * even if some listener refuses to close.
 */
export const boundShutdown = (millis: number) =>
  Effect.sync(() => {
    const arm = () => {
      setTimeout(() => {
        process.stderr.write(`shutdown did not finish within ${millis}ms; exiting\n`)
        process.exit(FAILURE_EXIT_CODE)
      }, millis).unref()
    }
    process.once("SIGTERM", arm)
    process.once("SIGINT", arm)
  })
