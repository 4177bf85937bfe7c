/**
 * A binary's command tree as the command line needs it: which flags each command takes, how
 * they take values, and what help says about them. Built from the @effect/cli tree by
 * src/programs/shared/cli-model.ts; checked (argv.ts) and rendered (help.ts) here.
 */

export interface FlagModel {
  /** `--name` first, then its aliases (`-n`). */
  readonly names: ReadonlyArray<string>
  /** What the value looks like (`string`, `duration`, `yaml|json`); undefined for a boolean. */
  readonly valueName: string | undefined
  /** A list flag: may be repeated, its values accumulate. */
  readonly repeated: boolean
  readonly description: string
  /** The default as the user would type it; undefined when the flag has none (optional or required). */
  readonly default: string | undefined
  /** An environment variable that stands in for the flag when it is absent. */
  readonly env: string | undefined
}

export interface CommandModel {
  readonly name: string
  readonly description: string
  readonly flags: ReadonlyArray<FlagModel>
  /** Usage of the positional arguments (`<method> <path> [<body>]`); empty when it takes none. */
  readonly args: string
  readonly children: ReadonlyArray<CommandModel>
}

/** A command that only groups subcommands: it takes neither flags nor arguments. */
export const isGroup = (command: CommandModel): boolean =>
  command.children.length > 0 && command.flags.length === 0 && command.args === ""
