/**
 * Flags shared by `install`/`upgrade`/`manifest install`, `uninstall`, `verify-install` and
 * `manifest translate`: which operator resource (files, `--set`, revision), plus the reading of
 * it (files read, `--charts` warned about, `--force` turning schema errors into warnings).
 */
import { type Command, Options } from "@effect/cli"
import { Console, Data, Effect, Either } from "effect"
import { boolFlag, durationFlag, textFlag } from "../../shared/options.js"
import { globalOptions } from "../global-options.js"
import { readInputFile } from "../input-files.js"

/** A failed install command: the message says what and where. */
export class InstallFailed extends Data.TaggedError("InstallFailed")<{ readonly message: string }> {}

const repeatedText = (name: string) =>
  Options.text(name).pipe(
    Options.repeated,
    Options.map((values) =>
      values
        .flatMap((v) => v.split(","))
        .map((v) => v.trim())
        .filter((v) => v !== ""),
    ),
  )

export const operatorOptions = {
  filename: repeatedText("filename").pipe(
    Options.withAlias("f"),
    Options.withDescription(
      "Path to file containing the operator custom resource (repeatable; overlaid left to right)",
    ),
  ),
  set: Options.text("set").pipe(
    Options.withAlias("s"),
    Options.repeated,
    Options.withDescription(
      "Override an operator value, e.g. to choose a profile (--set profile=demo), enable or disable components (--set components.cni.enabled=true), or override values (--set meshConfig.enableTracing=true); dots in a key are escaped with a backslash",
    ),
  ),
  revision: textFlag("revision").pipe(
    Options.withAlias("r"),
    Options.withDescription("Target control plane revision for the command"),
  ),
  manifests: textFlag("manifests").pipe(
    Options.withAlias("d"),
    Options.withDescription(
      "Specify a path to a directory of charts and profiles (accepted; the built-in ones are used)",
    ),
  ),
  dryRun: boolFlag("dry-run").pipe(Options.withDescription("Console/log output only, make no changes")),
}

export const chartsOption = textFlag("charts").pipe(Options.withDescription("Deprecated, use --manifests instead"))
export const forceOption = boolFlag("force").pipe(Options.withDescription("Proceed even with validation errors"))
export const skipConfirmationOption = boolFlag("skip-confirmation").pipe(
  Options.withAlias("y"),
  Options.withDescription("The skipConfirmation determines whether the user is prompted for confirmation"),
)

export interface OperatorArgs {
  readonly filename: ReadonlyArray<string>
  readonly set: ReadonlyArray<string>
  readonly revision: string
  readonly charts?: string
  readonly force?: boolean
}

/** Reads the files and resolves the operator; `--force` proceeds past schema errors (warned on stderr). */
export const readOperator = (args: OperatorArgs) =>
  Effect.gen(function* () {
    if ((args.charts ?? "") !== "")
      yield* Console.error("Warning: --charts is deprecated and will be removed; use --manifests instead")
    const files = yield* Effect.forEach(args.filename, (name) =>
      readInputFile(name).pipe(
        Effect.map((text) => ({ name, text })),
        Effect.mapError((e) => new InstallFailed({ message: `cannot read --filename ${e.message}` })),
      ),
    )
    const { resolveOperator } = yield* Effect.promise(() => import("../../../services/install/resolve.js"))
    const inputs = { files, sets: args.set, revision: args.revision }
    const resolved = resolveOperator(inputs)
    if (Either.isRight(resolved)) return resolved.right
    const forced = args.force === true ? resolveOperator(inputs, { unchecked: true }) : resolved
    if (Either.isLeft(forced))
      return yield* new InstallFailed({
        message: `invalid operator configuration:\n  ${resolved.left.join("\n  ")}${args.force === true ? "" : "\n(use --force to proceed despite validation errors)"}`,
      })
    yield* Console.error(`Warning: proceeding despite validation errors (--force):\n  ${resolved.left.join("\n  ")}`)
    return forced.right
  })

/** The flags of `install` (and `upgrade`, `manifest install`). */
export const installOptions = {
  ...operatorOptions,
  charts: chartsOption,
  force: forceOption,
  readinessTimeout: durationFlag("readiness-timeout", "5m0s").pipe(
    Options.withDescription("Maximum time to wait for mesh resources in each component to be ready"),
  ),
  skipConfirmation: skipConfirmationOption,
  verify: boolFlag("verify").pipe(Options.withDescription("Verify the control plane after installation")),
  global: globalOptions,
}

/** What install-run.ts receives. */
export type InstallArgs = Command.Command.ParseConfig<typeof installOptions>
