/**
 * Reading what is installed: `iptables-save` output parsed into tables and chains, the mesh's
 * leftovers in it, the lines that remove them, and the comparison with a wanted rule set.
 * Pure; the layer runs the commands.
 */
import { BUILTIN_CHAINS, finalState, isMeshChain, MESH_CHAIN_PREFIX, type Rule, TABLES, type Table } from "./builder.js"

/** table → chain → the rules' text after `-A CHAIN ` (as iptables-save prints it). */
export type SavedState = ReadonlyMap<string, ReadonlyMap<string, ReadonlyArray<string>>>

export const parseSave = (text: string): SavedState => {
  const state = new Map<string, Map<string, Array<string>>>()
  let table: Map<string, Array<string>> | undefined
  for (const raw of text.split("\n")) {
    const line = raw.trim()
    if (line === "" || line.startsWith("#") || line === "COMMIT") continue
    if (line.startsWith("*")) {
      const name = line.slice(1).trim()
      table = state.get(name) ?? new Map()
      state.set(name, table)
      continue
    }
    if (table === undefined) continue
    if (line.startsWith(":")) {
      const chain = line.slice(1).split(/\s+/)[0]!
      if (!table.has(chain)) table.set(chain, [])
      continue
    }
    const words = line.split(/\s+/)
    if ((words[0] === "-A" || words[0] === "--append") && words[1] !== undefined) {
      const rules = table.get(words[1]) ?? []
      rules.push(words.slice(2).join(" "))
      table.set(words[1], rules)
    }
  }
  return state
}

const jumpTarget = (ruleText: string): string | undefined => {
  const words = ruleText.split(/\s+/)
  const index = words.findIndex((word) => word === "-j" || word === "--jump")
  return index === -1 ? undefined : words[index + 1]?.replace(/^["']|["']$/g, "")
}

export const isMeshJump = (ruleText: string): boolean => {
  const target = jumpTarget(ruleText)
  return target?.startsWith(MESH_CHAIN_PREFIX) === true
}

/** The mesh's chains and the jumps into them found in the mesh's tables. */
export interface Leftovers {
  readonly chains: ReadonlyArray<{ readonly table: string; readonly chain: string }>
  readonly jumps: ReadonlyArray<{ readonly table: string; readonly chain: string; readonly rule: string }>
}

export const leftovers = (state: SavedState, tables: ReadonlyArray<string> = TABLES): Leftovers => {
  const chains: Array<{ table: string; chain: string }> = []
  const jumps: Array<{ table: string; chain: string; rule: string }> = []
  for (const table of tables) {
    for (const [chain, rules] of state.get(table) ?? []) {
      if (isMeshChain(chain)) chains.push({ table, chain })
      else for (const rule of rules) if (isMeshJump(rule)) jumps.push({ table, chain, rule })
    }
  }
  return { chains, jumps }
}

export const hasLeftovers = (found: Leftovers): boolean => found.chains.length > 0 || found.jumps.length > 0

/**
 * Restore lines (per table) removing the mesh: the jumps into mesh chains from other chains,
 * the `extra` rules (the wanted rule set's own rules in built-in chains that are known to be
 * installed), then every mesh chain flushed and deleted.
 */
export const removalLines = (
  found: Leftovers,
  extra: ReadonlyArray<Rule> = [],
): ReadonlyMap<Table, ReadonlyArray<string>> => {
  const lines = new Map<Table, Array<string>>()
  const add = (table: string, line: string) => {
    const list = lines.get(table as Table) ?? []
    if (!list.includes(line)) list.push(line)
    lines.set(table as Table, list)
  }
  for (const jump of found.jumps) add(jump.table, `-D ${jump.chain} ${jump.rule}`)
  for (const rule of extra) add(rule.table, `-D ${rule.chain} ${rule.params.join(" ")}`)
  for (const { table, chain } of found.chains) add(table, `-F ${chain}`)
  for (const { table, chain } of found.chains) add(table, `-X ${chain}`)
  return lines
}

/** The wanted rules that live in built-in chains and do not jump into a mesh chain. */
export const builtinNonJumpRules = (rules: ReadonlyArray<Rule>): ReadonlyArray<Rule> => {
  const seen = new Set<string>()
  return rules.filter((rule) => {
    if (!BUILTIN_CHAINS.has(rule.chain) || isMeshJump(rule.params.join(" "))) return false
    const key = `${rule.table} ${rule.chain} ${rule.params.join(" ")}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/**
 * The structural differences between what is installed and what is wanted: mesh chains missing,
 * extra, or with another number of rules, and another number of jumps into mesh chains in a
 * built-in chain. Rule text is compared by the layer with `iptables -C`, since iptables-save
 * prints rules in its own canonical form.
 */
export const structuralDrift = (state: SavedState, rules: ReadonlyArray<Rule>): ReadonlyArray<string> => {
  const wanted = finalState(rules)
  const problems: Array<string> = []
  for (const table of TABLES) {
    const current = state.get(table) ?? new Map<string, ReadonlyArray<string>>()
    const expected = wanted.get(table) ?? new Map<string, ReadonlyArray<string>>()
    const chains = new Set([...current.keys(), ...expected.keys()])
    for (const chain of chains) {
      const have = current.get(chain)
      const want = expected.get(chain)
      if (isMeshChain(chain)) {
        if (have === undefined) problems.push(`${table}/${chain} is missing`)
        else if (want === undefined) problems.push(`${table}/${chain} is not wanted`)
        else if (have.length !== want.length) {
          problems.push(`${table}/${chain} has ${have.length} rules, ${want.length} wanted`)
        }
      } else if (BUILTIN_CHAINS.has(chain)) {
        const haveJumps = (have ?? []).filter(isMeshJump).length
        const wantJumps = (want ?? []).filter(isMeshJump).length
        if (haveJumps !== wantJumps) {
          problems.push(`${table}/${chain} has ${haveJumps} jumps into mesh chains, ${wantJumps} wanted`)
        }
      }
    }
  }
  return problems
}

/** `iptables` arguments checking that a wanted rule is installed (`-t table -C chain ...`). */
export const checkArgs = (rule: Rule): ReadonlyArray<string> => ["-t", rule.table, "-C", rule.chain, ...rule.params]
