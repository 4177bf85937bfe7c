/**
 * A command's help page as plain text: its description, usage, aliases, subcommands (each with
 * its aliases beside its name, as the reference lists them) and flags (a group's own flags too),
 * each flag with its value type, description and default, wrapped to `width` columns. Headings are
 * bold only when `color` is set (a terminal without NO_COLOR): help piped to a file or a pager
 * stays free of escape codes.
 */
import type { CommandModel, FlagModel } from "./command-model.js"
import { isGroup } from "./command-model.js"

export interface HelpStyle {
  readonly width: number
  readonly color: boolean
}

/** Words of `text` in lines of at most `width` columns (a longer word gets its own line), each prefixed by `indent`. */
export const wrap = (text: string, width: number, indent: string): Array<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line !== "" && indent.length + line.length + 1 + word.length > width) {
      lines.push(indent + line)
      line = word
    } else line = line === "" ? word : `${line} ${word}`
  }
  if (line !== "") lines.push(indent + line)
  return lines
}

const flagTitle = (flag: FlagModel): string => {
  const [long, ...aliases] = flag.names
  const names = [...aliases, long].join(", ")
  const value = flag.valueName === undefined ? "" : ` ${flag.valueName}`
  return `${names}${value}`
}

/** "(default: ...; env X)", unless the description already says it. */
const flagFacts = (flag: FlagModel): string => {
  if (/\(default\b/.test(flag.description)) return ""
  const facts: Array<string> = []
  const quoted = flag.valueName === "string" && !flag.repeated
  facts.push(`default: ${flag.default === undefined ? "none" : quoted ? JSON.stringify(flag.default) : flag.default}`)
  if (flag.env !== undefined) facts.push(`or $${flag.env} when set`)
  if (flag.repeated) facts.push("repeat the flag or separate values with commas")
  return `(${facts.join("; ")})`
}

export const renderHelp = (path: ReadonlyArray<CommandModel>, style: HelpStyle): string => {
  const command = path[path.length - 1]!
  const line = path.map((c) => c.name).join(" ")
  const heading = (text: string) => (style.color ? `\u001b[1m${text}\u001b[0m` : text)
  const out: Array<string> = []
  if (command.description !== "") out.push(...wrap(command.description, style.width, ""), "")

  const groupFlags = command.groupFlags ?? []
  out.push(heading("Usage:"))
  if (!isGroup(command)) {
    const flags = command.flags.length > 0 ? " [flags]" : ""
    out.push(...wrap(`${line}${flags}${command.args === "" ? "" : ` ${command.args}`}`, style.width, "  "))
  }
  if (command.children.length > 0) out.push(`  ${line} <command>${groupFlags.length > 0 ? " [flags]" : ""}`)

  if ((command.aliases ?? []).length > 0) {
    out.push("", heading("Aliases:"), `  ${[command.name, ...(command.aliases ?? [])].join(", ")}`)
  }

  if (command.children.length > 0) {
    out.push("", heading("Commands:"))
    const title = (child: CommandModel) => [child.name, ...(child.aliases ?? [])].join(", ")
    const column = Math.max(...command.children.map((c) => title(c).length)) + 4
    for (const child of command.children) {
      const [first = "", ...rest] = wrap(child.description, style.width - column - 2, "")
      out.push(
        `  ${title(child).padEnd(column)}${first}`.trimEnd(),
        ...rest.map((text) => `${" ".repeat(column + 2)}${text}`),
      )
    }
  }

  const flags = command.flags.length > 0 ? command.flags : groupFlags
  if (flags.length > 0) {
    out.push("", heading("Flags:"))
    for (const flag of flags) {
      out.push(`  ${flagTitle(flag)}`)
      out.push(...wrap(`${flag.description} ${flagFacts(flag)}`, style.width, "      "))
    }
  }

  if (command.children.length > 0) out.push("", `Use "${line} <command> --help" for more about a command.`)
  return `${out.join("\n")}\n`
}
