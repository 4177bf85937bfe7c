/**
 * The options of `tag` and what its run file receives: shared by tag-command.ts (which
 * declares the command) and tag-run.ts (loaded only when it runs), so neither imports the other's types.
 */
import { type Command, Options } from "@effect/cli"
import { boolFlag, textFlag } from "../../shared/options.js"
import { globalOptions } from "../global-options.js"

export const skipConfirmation = boolFlag("skip-confirmation").pipe(
  Options.withAlias("y"),
  Options.withDescription("The skipConfirmation determines whether the user is prompted for confirmation"),
)

export const writeOptions = {
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

/** Inputs of `tag generate` and `tag set`. */
export type TagWriteArgs = Command.Command.ParseConfig<typeof writeOptions> & { readonly tag: string }

export const listOptions = {
  output: Options.choice("output", ["table", "json", "yaml"]).pipe(
    Options.withAlias("o"),
    Options.withDefault("table" as const),
    Options.withDescription("Output format for the tag list (table, json, yaml)"),
  ),
  global: globalOptions,
}
export type TagListArgs = Command.Command.ParseConfig<typeof listOptions>

export const removeOptions = { skipConfirmation, global: globalOptions }
export type TagRemoveArgs = Command.Command.ParseConfig<typeof removeOptions> & { readonly tag: string }
