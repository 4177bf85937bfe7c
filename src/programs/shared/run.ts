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
import { Cause, ConfigError, Duration, Effect, Exit, Layer, Runtime } from "effect"
import { buildInfo } from "../../services/build-info.js"
import { checkArgv } from "../../services/cli/argv.js"
import type { TreeNotes } from "../../services/cli/command-model.js"
import { renderHelp } from "../../services/cli/help.js"
import { describeConfigError, envTableConfig } from "../../services/config/env.js"
import { colorAllowed, terminalEnv } from "../../services/config/terminal-env.js"
import { makeShutdownDeadline, type ShutdownDeadlineShape } from "../../services/lifecycle/shutdown-deadline.js"
import { ListenError } from "../../services/net/listen-error.js"
import { commandModel } from "./cli-model.js"

/** Exit code of usage errors (unknown flag, bad value): the reference's CLI library uses 1. */
export const USAGE_EXIT_CODE = 1
/** How long a failed run may take to drain its output before the process is made to exit. */
const FAILED_EXIT_GRACE_MS = 2000
/** Exit code of a failure after the command line was accepted (bad environment, bind error, ...). */
export const FAILURE_EXIT_CODE = 1

// Built-in options (--completions, --wizard, ...) still work but stay out of the help pages.
const cliEnvironment = Layer.mergeAll(
  NodeFileSystem.layer,
  NodePath.layer,
  NodeTerminal.layer,
  // Flags are case-sensitive, as in Go: `--configdir` is not `--configDir` (checkArgv says which was meant).
  CliConfig.layer({ showBuiltIns: false, isCaseSensitive: true }),
)

/**
 * Help goes to a terminal with bold headings, anywhere else (or with NO_COLOR, TERM=dumb) as plain
 * text. Read once, for the one help page, through the table (a bad value cannot occur: both are strings).
 */
const helpStyle = () => {
  const tty = process.stdout.isTTY === true
  const terminal = Effect.runSync(envTableConfig(terminalEnv))
  return {
    width: tty ? Math.max(40, Math.min(process.stdout.columns ?? 80, 100)) : 80,
    color: colorAllowed(terminal, tty),
  }
}

const describeFailure = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (failure._tag === "Some") {
    const error = failure.value
    if (ConfigError.isConfigError(error)) return `invalid configuration:\n  ${describeConfigError(error).join("\n  ")}`
    const message =
      error instanceof Error
        ? error.message
        : typeof error === "object" && error !== null && "message" in error
          ? String(error.message)
          : String(error)
    // An error without a message (a library's bare tagged error) would print as "Error: ".
    if (message !== "") return message
  }
  // A listener that could not bind inside a layer that cannot fail (the agent's sockets).
  const defect = Cause.dieOption(cause)
  if (defect._tag === "Some" && defect.value instanceof ListenError) return defect.value.message
  return Cause.pretty(cause)
}

export const runCli = <Name extends string, E, A>(
  programName: string,
  root: Command.Command<Name, CliApp.CliApp.Environment, E, A>,
  notes?: TreeNotes,
): void => {
  // The command line is checked (and help rendered) here first; see services/cli/argv.ts for why.
  const model = commandModel(root, notes)
  const checked = checkArgv(model, process.argv.slice(2))
  if (checked._tag === "Help") {
    process.stdout.write(renderHelp(checked.path, helpStyle()))
    return
  }
  if (checked._tag === "Usage") {
    const line = checked.path.map((c) => c.name).join(" ")
    process.stderr.write(`Error: ${checked.message}\nRun "${line} --help" for usage.\n`)
    process.exitCode = USAGE_EXIT_CODE
    return
  }
  const argv = [...process.argv.slice(0, 2), ...checked.argv]
  const cli = Command.run(root, { name: programName, version: buildInfo.version })
  const program = Effect.suspend(() => cli(argv)).pipe(
    Effect.provide(cliEnvironment),
    Effect.exit,
    Effect.flatMap((exit) =>
      Effect.sync(() => {
        // A failed listener interrupts its siblings, so the cause holds interruptions too: only
        // a cause made of interruptions alone (SIGINT/SIGTERM) is a clean stop.
        if (Exit.isSuccess(exit) || Cause.isInterruptedOnly(exit.cause)) return
        const failure = Cause.failureOption(exit.cause)
        if (failure._tag === "Some" && ValidationError.isValidationError(failure.value)) {
          // @effect/cli has already printed the usage error.
          process.exitCode = USAGE_EXIT_CODE
          return
        }
        process.stderr.write(`Error: ${describeFailure(exit.cause)}\n`)
        process.exitCode = FAILURE_EXIT_CODE
        // Everything the program opened was closed with its scopes; a handle some library still
        // holds (a bind that completed after its scope closed) must not keep a failed daemon up.
        setTimeout(() => process.exit(FAILURE_EXIT_CODE), FAILED_EXIT_GRACE_MS).unref()
      }),
    ),
  )
  NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
}

/**
 * How long after `--shutdownDuration` the exit timer waits: the listeners close what is left of
 * their connections when the shutdown countdown ends, and a shutdown completed that way is a
 * clean stop (exit 0); the timer must not race it.
 */
const EXIT_MARGIN_MS = 1000
/** Node's timers take at most this many milliseconds; a longer delay would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * Bounds graceful shutdown: once SIGTERM or SIGINT arrives, the returned countdown starts (the
 * listeners drain until it ends, then close what is left; provide it as `ShutdownDeadline`) and
 * the process exits (1) shortly after `millis` even if something refuses to close.
 */
export const boundShutdown = (millis: number): Effect.Effect<ShutdownDeadlineShape> =>
  Effect.gen(function* () {
    const deadline = yield* makeShutdownDeadline(Duration.millis(millis))
    const runSync = Runtime.runSync(yield* Effect.runtime<never>())
    const arm = () => {
      runSync(deadline.begin)
      setTimeout(
        () => {
          process.stderr.write(`shutdown did not finish within ${millis}ms; exiting\n`)
          process.exit(FAILURE_EXIT_CODE)
        },
        Math.min(MAX_TIMER_MS, millis + EXIT_MARGIN_MS),
      ).unref()
    }
    process.once("SIGTERM", arm)
    process.once("SIGINT", arm)
    return deadline
  })
