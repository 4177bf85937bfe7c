/**
 * `meshctl tag`: revision tags, mutable aliases of control-plane revisions (spec part 3 §1 rule
 * 1, §4.3): `generate` prints a tag's webhook configuration, `set` writes it, `list` (`show`)
 * shows tags and the namespaces using them, `remove` (`delete`) deletes one. The work is in
 * tag-run.ts, loaded only when a subcommand runs.
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect } from "effect"
import type { LogSettings } from "../../services/logging/options.js"
import { boolFlag, textFlag } from "../shared/options.js"
import { globalOptions } from "./global-options.js"

const skipConfirmation = boolFlag("skip-confirmation").pipe(
  Options.withAlias("y"),
  Options.withDescription("The skipConfirmation determines whether the user is prompted for confirmation"),
)

const writeOptions = {
  autoInjectNamespaces: boolFlag("auto-inject-namespaces").pipe(
    Options.withDescription(
      "If set to true, the sidecars should be automatically injected into all namespaces by default (default tag only)",
    ),
  ),
  manifests: textFlag("manifests").pipe(
    Options.withAlias("d"),
    Options.withDescription(
      "Specify a path to a directory of charts and profiles (accepted; the webhooks are built from the cluster's)",
    ),
  ),
  overwrite: boolFlag("overwrite").pipe(
    Options.withDescription(
      "If true, allow revision tags to be overwritten, otherwise reject revision tag updates that overwrite existing revision tags",
    ),
  ),
  revision: textFlag("revision").pipe(
    Options.withAlias("r"),
    Options.withDescription("Control plane revision to reference from a given revision tag"),
  ),
  skipConfirmation,
  webhookName: textFlag("webhook-name").pipe(
    Options.withDescription("Name to use for a revision tag's mutating webhook configuration"),
  ),
  global: globalOptions,
}

const tagArg = Args.text({ name: "revision-tag" }).pipe(Args.withDescription("the revision tag"))

/** Inputs of `tag generate` and `tag set`. */
export type TagWriteArgs = Command.Command.ParseConfig<typeof writeOptions> & { readonly tag: string }

const listOptions = {
  output: Options.choice("output", ["table", "json", "yaml"]).pipe(
    Options.withAlias("o"),
    Options.withDefault("table" as const),
    Options.withDescription("Output format for the tag list (table, json, yaml)"),
  ),
  global: globalOptions,
}
export type TagListArgs = Command.Command.ParseConfig<typeof listOptions>

const removeOptions = { skipConfirmation, global: globalOptions }
export type TagRemoveArgs = Command.Command.ParseConfig<typeof removeOptions> & { readonly tag: string }

const runModule = () => Effect.promise(() => import("./tag-run.js"))

const writeCommand = (name: "generate" | "set", logging: Options.Options<LogSettings>) =>
  Command.make(name, { ...writeOptions, tag: tagArg, logging }, (args) =>
    Effect.flatMap(runModule(), (module) => module.runTagWrite(name, args)),
  ).pipe(
    Command.withDescription(
      name === "generate"
        ? "Generate configuration for a revision tag and write it to stdout"
        : "Create or modify a revision tag",
    ),
  )

const listCommand = (name: string, logging: Options.Options<LogSettings>) =>
  Command.make(name, { ...listOptions, logging }, (args) =>
    Effect.flatMap(runModule(), (module) => module.runTagList(args)),
  ).pipe(Command.withDescription("List existing revision tags"))

const removeCommand = (name: string, logging: Options.Options<LogSettings>) =>
  Command.make(name, { ...removeOptions, tag: tagArg, logging }, (args) =>
    Effect.flatMap(runModule(), (module) => module.runTagRemove(args)),
  ).pipe(Command.withDescription("Remove a revision tag"))

/** `meshctl tag` (@effect/cli has no command aliases: `show` and `delete` are twins). */
export const tagCommand = (logging: Options.Options<LogSettings>) =>
  Command.make("tag").pipe(
    Command.withDescription("Command group used to interact with revision tags"),
    Command.withSubcommands([
      writeCommand("generate", logging),
      writeCommand("set", logging),
      listCommand("list", logging),
      listCommand("show", logging),
      removeCommand("remove", logging),
      removeCommand("delete", logging),
    ]),
  )
