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
  /** Other names of the command (`ps` for `proxy-status`): accepted, and shown beside its name. */
  readonly aliases?: ReadonlyArray<string>
  /**
   * Flags a group gives every command below it (the reference's persistent flags): shown in the
   * group's help and accepted before the subcommand's name, which then receives them.
   */
  readonly groupFlags?: ReadonlyArray<FlagModel>
}

/** A command that only groups subcommands: it takes neither flags nor arguments. */
export const isGroup = (command: CommandModel): boolean =>
  command.children.length > 0 && command.flags.length === 0 && command.args === ""

/**
 * What @effect/cli cannot say about a tree, keyed by command path below the root (canonical
 * names joined by spaces, "" for the root itself).
 */
export interface TreeNotes {
  /**
   * A command's aliases. @effect/cli has no command aliases, so each alias is a sibling command
   * built by the same factory; help folds it into its canonical command.
   */
  readonly aliases?: Readonly<Record<string, ReadonlyArray<string>>>
  /** A group's own flags (long names), which every command below it also takes. */
  readonly groupFlags?: Readonly<Record<string, ReadonlyArray<string>>>
}

/** The first flag named `long` in the commands under `command` (itself included), depth first. */
const findFlag = (command: CommandModel, long: string): FlagModel | undefined =>
  command.flags.find((f) => f.names[0] === long) ??
  command.children.reduce<FlagModel | undefined>((found, child) => found ?? findFlag(child, long), undefined)

/**
 * The tree with `notes` applied: alias commands folded into their canonical sibling (as its
 * `aliases`), group flags attached (taken from the commands below, which must all take them).
 */
export const annotate = (root: CommandModel, notes: TreeNotes, path: ReadonlyArray<string> = []): CommandModel => {
  const key = path.join(" ")
  const aliasOf = new Map<string, string>()
  for (const child of root.children) {
    for (const alias of notes.aliases?.[[...path, child.name].join(" ")] ?? []) aliasOf.set(alias, child.name)
  }
  const children = root.children
    .filter((child) => !aliasOf.has(child.name))
    .map((child) => {
      const aliases = root.children.filter((c) => aliasOf.get(c.name) === child.name).map((c) => c.name)
      const annotated = annotate(child, notes, [...path, child.name])
      return aliases.length === 0 ? annotated : { ...annotated, aliases }
    })
  const groupFlags = (notes.groupFlags?.[key] ?? []).flatMap((long) => {
    const flag = findFlag(root, long)
    return flag === undefined ? [] : [flag]
  })
  return { ...root, children, ...(groupFlags.length > 0 ? { groupFlags } : {}) }
}
