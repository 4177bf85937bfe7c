/**
 * Checks a command line against the command tree before @effect/cli parses it, for what
 * @effect/cli 0.77 gets wrong: it matches flag names case-insensitively (so `--configdir` was
 * silently another flag's twin), splits `--flag=value` only for single-valued flags, reports a
 * repeated single flag as an unknown argument, and never suggests the flag that was meant.
 *
 * The result is the command line @effect/cli should see: every `--flag=value` split in two,
 * a single-valued flag given twice reduced to its last value (Go's flag semantics), list
 * flags kept in full so their values accumulate, and a group's flag given before the
 * subcommand's name (`meshctl --context c validate`, `meshctl admin -l x log`) moved after it,
 * since in @effect/cli only the subcommand takes it. An alias (`ps`) finds its command.
 */
import { type CommandModel, type FlagModel, isGroup } from "./command-model.js"

/** Options @effect/cli handles itself; they are kept out of help but still work. */
const BUILT_INS: ReadonlyMap<string, boolean> = new Map([
  // name → takes a value
  ["--version", false],
  ["--wizard", false],
  ["--completions", true],
  ["--log-level", true],
])
const HELP = new Set(["--help", "-h"])

export type ArgvOutcome =
  /** Run with this command line. */
  | { readonly _tag: "Run"; readonly argv: ReadonlyArray<string> }
  /** Print the help of the command at the end of `path`. */
  | { readonly _tag: "Help"; readonly path: ReadonlyArray<CommandModel> }
  /** A usage error for the command at the end of `path`. */
  | { readonly _tag: "Usage"; readonly message: string; readonly path: ReadonlyArray<CommandModel> }

const distance = (a: string, b: string): number => {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    previous = current
  }
  return previous[b.length]!
}

/**
 * The candidate closest to `word`: equal ignoring case, else within two edits (ignoring case),
 * else the only one it abbreviates.
 */
export const closest = (word: string, candidates: ReadonlyArray<string>): string | undefined => {
  const lower = word.toLowerCase()
  const same = candidates.find((c) => c.toLowerCase() === lower)
  if (same !== undefined) return same
  const extending = candidates.filter((c) => c.toLowerCase().startsWith(lower) && lower.replace(/^-+/, "").length >= 2)
  let best: string | undefined
  let bestDistance = 3
  for (const candidate of candidates) {
    const d = distance(lower, candidate.toLowerCase())
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  return best ?? (extending.length === 1 ? extending[0] : undefined)
}

const commandLine = (path: ReadonlyArray<CommandModel>) => path.map((c) => c.name).join(" ")

interface Emitted {
  /** The flag, for last-wins; undefined for positionals, built-ins and command names. */
  readonly flag: FlagModel | undefined
  readonly tokens: ReadonlyArray<string>
  /** A command name (the path so far). */
  readonly command?: boolean
  /** A group's flag given before the subcommand: it goes after the last command name. */
  readonly carried?: boolean
}

/** The emitted tokens, carried group flags placed right after the last command name. */
const commandLineOf = (emitted: ReadonlyArray<Emitted>): ReadonlyArray<string> => {
  const carried = emitted.filter((e) => e.carried === true)
  const rest = emitted.filter((e) => e.carried !== true)
  let last = -1
  rest.forEach((e, i) => {
    if (e.command === true) last = i
  })
  return [...rest.slice(0, last + 1), ...carried, ...rest.slice(last + 1)].flatMap((e) => e.tokens)
}

export const checkArgv = (root: CommandModel, argv: ReadonlyArray<string>): ArgvOutcome => {
  const path: Array<CommandModel> = [root]
  const emitted: Array<Emitted> = []
  let help = false
  let positionals = 0
  const usage = (message: string): ArgvOutcome => ({ _tag: "Usage", message, path: [...path] })

  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!
    const command = path[path.length - 1]!
    if (token === "--") {
      emitted.push({ flag: undefined, tokens: argv.slice(i) })
      break
    }
    if (token.startsWith("-") && token !== "-") {
      if (HELP.has(token)) {
        help = true
        continue
      }
      const eq = token.indexOf("=")
      const name = eq === -1 ? token : token.slice(0, eq)
      const inline = eq === -1 ? undefined : token.slice(eq + 1)
      // Below a group, its flags (and its ancestors') are accepted; a command that runs takes its own.
      const groupFlags = command.children.length > 0 ? path.flatMap((c) => c.groupFlags ?? []) : []
      const own = command.flags.find((f) => f.names.includes(name))
      const flag = own ?? groupFlags.find((f) => f.names.includes(name))
      if (flag === undefined) {
        const builtIn = BUILT_INS.get(name)
        if (builtIn !== undefined) {
          const value = inline ?? (builtIn ? argv[++i] : undefined)
          emitted.push({ flag: undefined, tokens: value === undefined ? [name] : [name, value] })
          continue
        }
        const names = [...command.flags, ...groupFlags].flatMap((f) => f.names)
        const suggestion = closest(name.replace(/^-+/, "--"), names) ?? closest(name, names)
        return usage(
          `unknown flag ${name} for "${commandLine(path)}"${suggestion === undefined ? "" : `; did you mean ${suggestion}?`}`,
        )
      }
      let tokens: ReadonlyArray<string>
      if (flag.valueName === undefined) {
        // A boolean takes `--x`, `--x=false`, or `--x false` (as @effect/cli reads it).
        const next = argv[i + 1]
        if (inline !== undefined) tokens = [name, inline]
        else if (next !== undefined && /^(true|false)$/i.test(next)) tokens = [name, argv[++i]!]
        else tokens = [name]
      } else {
        const value = inline ?? argv[++i]
        if (value === undefined) return usage(`flag ${name} needs a value (${flag.valueName})`)
        tokens = [name, value]
      }
      // Go's flags: a single-valued flag given twice keeps its last value; list values accumulate.
      if (!flag.repeated) {
        const earlier = emitted.findIndex((e) => e.flag?.names[0] === flag.names[0])
        if (earlier !== -1) emitted.splice(earlier, 1)
      }
      emitted.push({ flag, tokens, carried: own === undefined })
      continue
    }
    if (positionals === 0 && command.children.length > 0) {
      const child = command.children.find((c) => c.name === token || (c.aliases ?? []).includes(token))
      if (child !== undefined) {
        path.push(child)
        emitted.push({ flag: undefined, tokens: [token], command: true })
        continue
      }
      if (command.args === "") {
        const suggestion = closest(
          token,
          command.children.flatMap((c) => [c.name, ...(c.aliases ?? [])]),
        )
        return usage(
          `unknown command "${token}" for "${commandLine(path)}"${suggestion === undefined ? "" : `; did you mean ${suggestion}?`}`,
        )
      }
    }
    if (command.args === "") return usage(`"${commandLine(path)}" takes no arguments, got "${token}"`)
    positionals++
    emitted.push({ flag: undefined, tokens: [token] })
  }
  const last = path[path.length - 1]!
  // A group invoked alone has nothing to run: show what it offers.
  if (help || isGroup(last)) return { _tag: "Help", path }
  return { _tag: "Run", argv: commandLineOf(emitted) }
}
