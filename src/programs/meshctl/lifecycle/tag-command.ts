/**
 * `meshctl tag`: revision tags, mutable aliases of control-plane revisions (spec part 3 §1 rule
 * 1, §4.3): `generate` prints a tag's webhook configuration, `set` writes it, `list` (`show`)
 * shows tags and the namespaces using them, `remove` (`delete`) deletes one. The work is in
 * tag-run.ts, loaded only when a subcommand runs.
 */
import { Args, Command, type Options } from "@effect/cli"
import { Effect } from "effect"
import type { LogSettings } from "../../../services/logging/options.js"
import { listOptions, removeOptions, writeOptions } from "./tag-options.js"

const tagArg = Args.text({ name: "revision-tag" }).pipe(Args.withDescription("the revision tag"))

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
