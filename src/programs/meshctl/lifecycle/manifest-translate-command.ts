/**
 * `meshctl manifest translate`: prints the fully resolved operator resource (profile, `-f`
 * overlays left to right, `--set` flags, `--revision`) as YAML, or writes it as
 * `<output>/operator.yaml`. The reference prints chart values here; this mesh renders without
 * charts, and this resolved resource is exactly what its renderer reads.
 */
import { Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Console, Effect } from "effect"
import type { LogSettings } from "../../../services/logging/options.js"
import { textFlag } from "../../shared/options.js"
import { globalOptions } from "../global-options.js"
import { InstallFailed, operatorOptions, readOperator } from "./install-options.js"

const options = {
  ...operatorOptions,
  output: textFlag("output").pipe(
    Options.withAlias("o"),
    Options.withDescription("Directory to write the resolved operator resource to (as operator.yaml); stdout if empty"),
  ),
  global: globalOptions,
}

export const manifestTranslateCommand = (logging: Options.Options<LogSettings>) =>
  Command.make("translate", { ...options, logging }, (args) =>
    Effect.gen(function* () {
      const op = yield* readOperator(args)
      const { resolvedOperatorYaml, TRANSLATED_FILE } = yield* Effect.promise(
        () => import("../../../services/install/translate.js"),
      )
      const text = resolvedOperatorYaml(op)
      if (args.output === "" || args.dryRun) return yield* Effect.sync(() => process.stdout.write(text))
      const fs = yield* FileSystem.FileSystem
      const path = `${args.output.replace(/\/+$/, "")}/${TRANSLATED_FILE}`
      yield* fs.makeDirectory(args.output, { recursive: true }).pipe(
        Effect.zipRight(fs.writeFileString(path, text)),
        Effect.mapError((e) => new InstallFailed({ message: `cannot write --output ${path}: ${e.message}` })),
      )
      yield* Console.log(`Wrote the resolved operator resource to ${path}`)
    }),
  ).pipe(
    Command.withDescription(
      "Prints the fully resolved operator resource (profile, -f overlays, --set flags and revision applied) that the install renders from; the mesh has no charts, so this takes the place of the reference's chart values",
    ),
  )
