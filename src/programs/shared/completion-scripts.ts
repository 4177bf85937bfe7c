/**
 * Post-processing of the completion scripts @effect/cli generates (pure, line based):
 * the bash command-id fix for program names with dashes, `--no-descriptions` for fish and
 * zsh, and a PowerShell script derived from the bash script's command table.
 */

/** Identifier @effect/cli derives from a program name for its bash/zsh state machine. */
const commandId = (programName: string): string => programName.replaceAll("-", "__")

/**
 * Two flaws of @effect/cli's bash script, mended here: it names the root state `mesh-discovery`
 * but every transition out of it `mesh__discovery` (so subcommands of a dashed program never
 * complete), and it labels transitions of nested subcommands `a,b,c` where the state it matches
 * against is `a__b,c` (so `completion bash` never completes).
 */
export const fixBashCommandIds = (programName: string, lines: ReadonlyArray<string>): ReadonlyArray<string> => {
  const id = commandId(programName)
  return lines.map((line) => {
    if (line.trim() === `cmd="${programName}"`) return line.replace(`cmd="${programName}"`, `cmd="${id}"`)
    if (line.trim() === `${programName})`) return line.replace(`${programName})`, `${id})`)
    const nested = /^(\s*)([\w-]+(?:,[\w-]+){2,})\)$/.exec(line)
    if (nested !== null) {
      const parts = nested[2]!.split(",")
      const last = parts.pop()!
      return `${nested[1]}${parts.join("__")},${last})`
    }
    return line
  })
}

/** Drops `-d '...'` descriptions from fish `complete` lines. */
export const stripFishDescriptions = (lines: ReadonlyArray<string>): ReadonlyArray<string> =>
  lines.map((line) => line.replace(/ -d '(?:[^']|'\\'')*'$/, ""))

/** Drops `[...]` option descriptions and `:description` parts of command lists from a zsh script. */
export const stripZshDescriptions = (lines: ReadonlyArray<string>): ReadonlyArray<string> =>
  lines.map((line) => {
    const option = /^(\s*)'(-{1,2}[^'[]+)\[.*\](.*)' \\$/.exec(line)
    if (option !== null) return `${option[1]}'${option[2]}${option[3]}' \\`
    const command = /^(\s*)'([^':\s]+):.*' \\$/.exec(line)
    if (command !== null) return `${command[1]}'${command[2]}' \\`
    return line
  })

interface BashTable {
  readonly root: string
  readonly transitions: ReadonlyArray<readonly [string, string]>
  readonly options: ReadonlyArray<readonly [string, ReadonlyArray<string>]>
}

/** Reads the state machine out of a (fixed) bash completion script. */
export const readBashTable = (programName: string, lines: ReadonlyArray<string>): BashTable => {
  const transitions: Array<readonly [string, string]> = []
  const options: Array<readonly [string, ReadonlyArray<string>]> = []
  for (let i = 0; i < lines.length - 1; i++) {
    const label = /^\s*([\w-]+(?:,[\w-]+)?)\)$/.exec(lines[i]!)
    if (label === null) continue
    const next = lines[i + 1]!.trim()
    const target = /^cmd="([\w-]+)"$/.exec(next)
    if (target !== null && label[1]!.includes(",")) transitions.push([label[1]!, target[1]!])
    const opts = /^opts="(.*)"$/.exec(next)
    if (opts !== null) options.push([label[1]!, opts[1]!.split(" ").filter((word) => word !== "")])
  }
  return { root: commandId(programName), transitions, options }
}

const psString = (text: string): string => `'${text.replaceAll("'", "''")}'`

/** A PowerShell argument completer with the same command table as the bash script. */
export const powershellCompletion = (
  programName: string,
  bashLines: ReadonlyArray<string>,
  _noDescriptions: boolean,
): ReadonlyArray<string> => {
  const table = readBashTable(programName, fixBashCommandIds(programName, bashLines))
  return [
    `# powershell completion for ${programName}`,
    `Register-ArgumentCompleter -Native -CommandName ${psString(programName)} -ScriptBlock {`,
    "    param($wordToComplete, $commandAst, $cursorPosition)",
    "    $transitions = @{",
    ...table.transitions.map(([from, to]) => `        ${psString(from)} = ${psString(to)}`),
    "    }",
    "    $options = @{",
    ...table.options.map(([state, words]) => `        ${psString(state)} = @(${words.map(psString).join(", ")})`),
    "    }",
    `    $state = ${psString(table.root)}`,
    "    foreach ($element in ($commandAst.CommandElements | Select-Object -Skip 1)) {",
    "        $text = $element.ToString()",
    "        if ($element.Extent.StartOffset -ge $cursorPosition) { break }",
    "        if ($text -eq $wordToComplete) { break }",
    '        $key = "$state,$text"',
    "        if ($transitions.ContainsKey($key)) { $state = $transitions[$key] }",
    "    }",
    '    $options[$state] | Where-Object { $_ -like "$wordToComplete*" } | ForEach-Object {',
    "        [System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_)",
    "    }",
    "}",
  ]
}
