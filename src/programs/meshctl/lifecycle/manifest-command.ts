/**
 * `meshctl manifest generate`: the install manifest (every orchestrator object of the mesh) for
 * an operator resource, as multi-document YAML on stdout. The operator comes from the profile
 * (`--set profile=<name>` or `spec.profile`), the `-f` files laid over it left to right and the
 * `--set` flags; `--revision` names the control-plane revision. Nothing is read from a
 * cluster: `--manifests`, `--charts`, `--cluster-specific`, `--force` and `--dry-run` are
 * accepted (the charts are built in; generation never changes a cluster).
 */
import { Command, Options } from "@effect/cli"
import { Data, Effect, Either } from "effect"
import type { LogSettings } from "../../../services/logging/options.js"
import { boolFlag } from "../../shared/options.js"
import { globalOptions } from "../global-options.js"
import { readInputFile } from "../input-files.js"
import { installCommandNamed } from "./install-command.js"
import { chartsOption, operatorOptions } from "./install-options.js"
import { manifestTranslateCommand } from "./manifest-translate-command.js"

/** The failure of `meshctl manifest ...`: the message names the file or field. */
export class ManifestFailed extends Data.TaggedError("ManifestFailed")<{ readonly message: string }> {}

const options = {
  ...operatorOptions,
  charts: chartsOption,
  clusterSpecific: boolFlag("cluster-specific").pipe(
    Options.withDescription(
      "If enabled, the current cluster will be checked for cluster-specific setting detection (not supported offline)",
    ),
  ),
  dryRun: boolFlag("dry-run").pipe(Options.withDescription("Console/log output only, make no changes")),
  force: boolFlag("force").pipe(Options.withDescription("Proceed even with validation errors")),
  global: globalOptions,
}

type GenerateArgs = {
  readonly [K in keyof typeof options]: (typeof options)[K] extends Options.Options<infer A> ? A : never
}

const fail = (message: string) => new ManifestFailed({ message })

const runGenerate = (args: GenerateArgs) =>
  Effect.gen(function* () {
    const files = yield* Effect.forEach(args.filename, (name) =>
      readInputFile(name).pipe(
        Effect.map((text) => ({ name, text })),
        Effect.mapError((e) => fail(`cannot read --filename ${e.message}`)),
      ),
    )
    // The install model loads only when this command runs: --help stays fast.
    const [{ resolveOperator }, { renderManifest, manifestYaml }] = yield* Effect.promise(() =>
      Promise.all([import("../../../services/install/resolve.js"), import("../../../services/install/manifest.js")]),
    )
    const resolved = resolveOperator({ files, sets: args.set, revision: args.revision })
    if (Either.isLeft(resolved)) return yield* fail(`invalid operator configuration:\n  ${resolved.left.join("\n  ")}`)
    const text = manifestYaml(renderManifest(resolved.right))
    // A reader that stops early (`| head`) closes the pipe: that ends the output, not the command.
    // The listener stays: the stream reports a closed pipe both to the callback and as an event.
    yield* Effect.async<void>((resume) => {
      process.stdout.on("error", () => {})
      process.stdout.write(text, () => resume(Effect.void))
    })
  })

const generateCommand = (logging: Options.Options<LogSettings>) =>
  Command.make("generate", { ...options, logging }, runGenerate).pipe(
    Command.withDescription("Generates a mesh install manifest and writes it to stdout"),
  )

/** `meshctl manifest`: commands that generate the mesh's install manifests. */
export const manifestCommand = (logging: Options.Options<LogSettings>) =>
  Command.make("manifest").pipe(
    Command.withDescription("Commands related to mesh manifests"),
    Command.withSubcommands([
      generateCommand(logging),
      installCommandNamed("install", logging),
      installCommandNamed("apply", logging),
      manifestTranslateCommand(logging),
    ]),
  )
