/**
 * `completion <shell>` for bash, fish, powershell and zsh, each with `--no-descriptions`.
 * The scripts are generated from the live command tree, so they never drift from the flags.
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect } from "effect"
import type { LogSettings } from "../../services/logging/options.js"
import {
  fixBashCommandIds,
  powershellCompletion,
  stripFishDescriptions,
  stripZshDescriptions,
} from "./completion-scripts.js"
import { boolFlag } from "./options.js"

// biome-ignore lint/suspicious/noExplicitAny: any command tree of any binary
type AnyCommand = Command.Command<string, any, any, any>

/**
 * `tree` returns the binary's root command; lazily, because the root contains this command.
 * `extra` are flags the binary gives every command (meshctl's global flags, install-cni's
 * introspection address): accepted here too, as the spec says every command takes them.
 */
export const makeCompletionCommand = (
  programName: string,
  tree: () => unknown,
  logging: Options.Options<LogSettings>,
  extra: Options.Options<unknown> = Options.none,
) => {
  const noDescriptions = boolFlag("no-descriptions").pipe(Options.withDescription("disable completion descriptions"))
  const shell = (
    name: string,
    description: string,
    generate: (noDescriptions: boolean) => Effect.Effect<ReadonlyArray<string>>,
  ) =>
    Command.make(name, { noDescriptions, logging, extra }, (args) =>
      generate(args.noDescriptions).pipe(Effect.flatMap((lines) => Console.log(lines.join("\n")))),
    ).pipe(Command.withDescription(description))

  return Command.make("completion").pipe(
    Command.withDescription(`Generate the autocompletion script for ${programName} for the specified shell`),
    Command.withSubcommands([
      shell("bash", "Generate the autocompletion script for bash", () =>
        Command.getBashCompletions(tree() as AnyCommand, programName).pipe(
          Effect.map((lines) => fixBashCommandIds(programName, lines)),
        ),
      ),
      shell("fish", "Generate the autocompletion script for fish", (strip) =>
        Command.getFishCompletions(tree() as AnyCommand, programName).pipe(
          Effect.map((lines) => (strip ? stripFishDescriptions(lines) : lines)),
        ),
      ),
      shell("powershell", "Generate the autocompletion script for powershell", (strip) =>
        Command.getBashCompletions(tree() as AnyCommand, programName).pipe(
          Effect.map((bashLines) => powershellCompletion(programName, bashLines, strip)),
        ),
      ),
      shell("zsh", "Generate the autocompletion script for zsh", (strip) =>
        Command.getZshCompletions(tree() as AnyCommand, programName).pipe(
          Effect.map((lines) => (strip ? stripZshDescriptions(lines) : lines)),
        ),
      ),
    ]),
  )
}
