/**
 * The command-line surface against the specification (test/programs/cli-surface-table.ts): every
 * command path of the four binaries — aliases included, 190-odd — with each flag's shorthand,
 * type and default; meshctl's aliases and group flags as help shows them. The trees are read
 * in-process (the same model `--help` and the argv check use); a handful of built binaries are
 * then run to show that the help users read says the same.
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { root as installCni } from "../../src/programs/install-cni/command.js"
import { root as meshAgent } from "../../src/programs/mesh-agent/command.js"
import { root as meshDiscovery } from "../../src/programs/mesh-discovery/command.js"
import { root as meshctl } from "../../src/programs/meshctl/command.js"
import { meshctlTreeNotes } from "../../src/programs/meshctl/tree-notes.js"
import { commandModel } from "../../src/programs/shared/cli-model.js"
import type { CommandModel, FlagModel } from "../../src/services/cli/command-model.js"
import { run } from "../support/processes.js"
import { type BinarySurface, GROUP, SURFACE } from "./cli-surface-table.js"

type Binary = keyof typeof SURFACE
const ROOTS: Record<Binary, CommandModel> = {
  "mesh-discovery": commandModel(meshDiscovery),
  "mesh-agent": commandModel(meshAgent),
  "install-cni": commandModel(installCni),
  meshctl: commandModel(meshctl),
}

/** A flag as the table writes it: `--name[/-x] type[=default]`. */
const rowOf = (flag: FlagModel): string => {
  const v = flag.valueName
  const type = v === undefined ? "bool" : v.includes("|") ? `choice(${v})` : flag.repeated ? "list" : v
  // A list without a default says "none" in help; the table writes it empty.
  const fallback = type === "list" && flag.default === "none" ? "" : flag.default
  return `${flag.names.join("/")} ${type}${fallback === undefined ? "" : `=${fallback}`}`
}
const longName = (row: string) => row.split(/[ /]/)[0]!
const under = (parent: string, name: string) => (parent === "" ? name : `${parent} ${name}`)

/** Every command path of `root` (unfolded: each alias is its own path), with its canonical path per `surface`. */
const walk = (
  surface: BinarySurface,
  node: CommandModel,
  path = "",
  canonical = "",
): Array<{ path: string; canonical: string; node: CommandModel }> => [
  { path, canonical, node },
  ...node.children.flatMap((child) => {
    const aliasOf = Object.entries(surface.aliases).find(
      ([target, aliases]) => target.split(" ").slice(0, -1).join(" ") === canonical && aliases.includes(child.name),
    )?.[0]
    return walk(surface, child, under(path, child.name), aliasOf ?? under(canonical, child.name))
  }),
]

/** The flags a command path has, as table rows (its own and the `every` set). */
const expectedRows = (surface: BinarySurface, canonical: string): ReadonlyArray<string> | typeof GROUP | undefined => {
  const own = surface.commands[canonical]
  if (own === undefined || own === GROUP) return own
  return [...surface.every, ...own]
}

describe.each(Object.keys(SURFACE) as Array<Binary>)("%s command paths against the spec table", (binary) => {
  const surface = SURFACE[binary]
  const paths = walk(surface, ROOTS[binary])

  it("has every command of the table, and no command the table lacks", () => {
    const canonical = new Set(paths.map((p) => p.canonical))
    expect(Object.keys(surface.commands).filter((path) => !canonical.has(path))).toEqual([])
    expect(paths.filter((p) => surface.commands[p.canonical] === undefined).map((p) => p.path)).toEqual([])
    // Each alias of the table is a command of its own on the command line.
    const typed = new Set(paths.map((p) => p.path))
    const aliasPaths = Object.entries(surface.aliases).flatMap(([target, aliases]) =>
      aliases.map((alias) => under(target.split(" ").slice(0, -1).join(" "), alias)),
    )
    expect(aliasPaths.filter((path) => !typed.has(path))).toEqual([])
  })

  it("gives every command path the flags, shorthands, types and defaults of the table", () => {
    const drift: Array<string> = []
    for (const { path, canonical, node } of paths) {
      const expected = expectedRows(surface, canonical)
      if (expected === undefined) continue
      if (expected === GROUP) {
        if (node.children.length === 0 || node.flags.length > 0) drift.push(`${binary} ${path}: not a group`)
        continue
      }
      const actual = new Set(node.flags.map(rowOf))
      const wanted = new Set(expected)
      for (const row of wanted) if (!actual.has(row)) drift.push(`${binary} ${path}: missing or different: ${row}`)
      for (const row of actual) if (!wanted.has(row)) drift.push(`${binary} ${path}: not in the spec table: ${row}`)
    }
    expect(drift).toEqual([])
    // The walk covered the whole tree, aliases included.
    expect(paths.length).toBeGreaterThan(Object.keys(surface.commands).length - 1)
  })
})

describe("meshctl help's aliases and group flags against the spec table", () => {
  const annotated = commandModel(meshctl, meshctlTreeNotes)
  const byPath = new Map<string, CommandModel>()
  const index = (node: CommandModel, path: string) => {
    byPath.set(path, node)
    for (const child of node.children) index(child, under(path, child.name))
  }
  index(annotated, "")

  it("folds exactly the table's aliases into their commands", () => {
    const folded = [...byPath].filter(([, node]) => (node.aliases ?? []).length > 0)
    expect(Object.fromEntries(folded.map(([path, node]) => [path, node.aliases]))).toEqual(SURFACE.meshctl.aliases)
    // A folded alias takes the same flags and arguments as its command (it is the same command).
    for (const [target, aliases] of Object.entries(SURFACE.meshctl.aliases)) {
      const parent = ROOTS.meshctl.children.length > 0 ? target.split(" ").slice(0, -1) : []
      const siblings = parent.reduce<CommandModel | undefined>(
        (node, name) => node?.children.find((c) => c.name === name),
        ROOTS.meshctl,
      )?.children
      const canonical = siblings?.find((c) => c.name === target.split(" ").at(-1))
      for (const alias of aliases) {
        const twin = siblings?.find((c) => c.name === alias)
        expect({ ...twin, name: canonical?.name }, `${alias} of ${target}`).toEqual(canonical)
      }
    }
  })

  it("shows each group's flags, which every command below the group takes", () => {
    const groups = [...byPath].filter(([, node]) => (node.groupFlags ?? []).length > 0)
    expect(
      Object.fromEntries(groups.map(([path, node]) => [path, (node.groupFlags ?? []).map((f) => f.names[0])])),
    ).toEqual(SURFACE.meshctl.groupFlags)
    const leaves = (node: CommandModel): Array<CommandModel> =>
      node.children.length === 0 ? [node] : node.children.flatMap(leaves)
    for (const [path, node] of groups) {
      for (const leaf of leaves(node)) {
        for (const flag of node.groupFlags ?? []) {
          expect(
            leaf.flags.some((f) => f.names[0] === flag.names[0]),
            `${path || "meshctl"}: ${leaf.name} lacks ${flag.names[0]}`,
          ).toBe(true)
        }
      }
    }
  })
})

/** Flag entries of a help page: long name → the default its text states ("none" when it has none). */
const helpFlags = (text: string): Map<string, string> => {
  const flags = new Map<string, string>()
  const section = text.split(/\nFlags:\n/)[1] ?? ""
  for (const entry of section.split(/\n(?= {2}-)/)) {
    const long = /--[\w-]+/.exec(entry.split("\n")[0] ?? "")?.[0]
    const stated = /\(default:? ("(?:[^"\\]|\\.)*"|[^;)]*)/.exec(entry.replace(/\s+/g, " "))?.[1]
    if (long === undefined || stated === undefined) continue
    flags.set(long, stated.startsWith('"') ? (JSON.parse(stated) as string) : stated.replace(/^\[(.*)\]$/, "$1"))
  }
  return flags
}

describe.concurrent("the built binaries' help says what the table says", () => {
  const cases: ReadonlyArray<readonly [Binary, string]> = [
    ["mesh-discovery", "discovery"],
    ["mesh-agent", "mesh-iptables"],
    ["install-cni", ""],
    ["install-cni", "version"],
    ["meshctl", "validate"],
    ["meshctl", "completion bash"],
    ["meshctl", "waypoint list"],
  ]
  it.each(cases)("%s %s --help", async (binary, path) => {
    const surface = SURFACE[binary]
    const result = await run(binary, [...(path === "" ? [] : path.split(" ")), "--help"])
    expect(result.code).toBe(0)
    const shown = helpFlags(result.stdout)
    const expected = expectedRows(surface, path)
    if (expected === undefined || expected === GROUP) throw new Error(`${path} is not a command of the table`)
    // Help says "none" for a flag without a default and for an empty list.
    const shownDefault = (row: string) => {
      const value = row.includes("=") ? row.slice(row.indexOf("=") + 1) : "none"
      return value === "" && / list=/.test(row) ? "none" : value
    }
    const wanted = new Map(expected.map((row) => [longName(row), shownDefault(row)]))
    expect(Object.fromEntries(shown)).toEqual(Object.fromEntries(wanted))
  })

  it("meshctl --help lists aliases beside their command and the global flags; group help shows group flags", async () => {
    const top = await run("meshctl", ["--help"])
    expect(top.stdout).toMatch(/^ {2}proxy-status, ps {2,}\S/m)
    expect(top.stdout).toMatch(/^ {2}dashboard, dash, d {2,}\S/m)
    expect(top.stdout).toMatch(/^ {2}experimental, x {2,}\S/m)
    expect(top.stdout).not.toMatch(/^ {2}(ps|pc|dash|d|x|v|apply|meshd) {2,}/m)
    expect([...helpFlags(top.stdout).keys()]).toEqual(SURFACE.meshctl.groupFlags[""])
    for (const [group, flags] of Object.entries(SURFACE.meshctl.groupFlags).filter(([path]) => path !== "")) {
      const help = await run("meshctl", [...group.split(" "), "--help"])
      expect([...helpFlags(help.stdout).keys()], group).toEqual(flags)
    }
  })

  it("accepts the global flags on validate, v and completion, and install-cni's ctrlz flags on version", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cli-surface-"))
    const file = join(dir, "gateway.yaml")
    writeFileSync(
      file,
      "apiVersion: networking.mesh.io/v1\nkind: Gateway\nmetadata:\n  name: g\n  namespace: default\nspec:\n  selector:\n    app: gw\n  servers:\n  - port: {number: 80, name: http, protocol: HTTP}\n    hosts: ['*']\n",
    )
    const results = await Promise.all([
      run("meshctl", ["validate", "--context", "foo", "-n", "default", "-f", file]),
      run("meshctl", ["--context", "foo", "v", "-f", file]),
      run("meshctl", ["completion", "bash", "--orchconfig", "/nonexistent", "--context", "foo"]),
      run("install-cni", ["version", "--ctrlz_address", "127.0.0.1", "--ctrlz_port", "19876"]),
      run("install-cni", ["completion", "zsh", "--ctrlz_port", "19876"]),
    ])
    for (const result of results) expect(result.stderr).toBe("")
    expect(results.map((r) => r.code)).toEqual([0, 0, 0, 0, 0])
    expect(results[0]!.stdout).toContain("is valid")
  })

  it("refuses a bug-report --duration or --timeout that is not a duration, naming the flag", async () => {
    const [duration, timeout] = await Promise.all([
      run("meshctl", ["bug-report", "--duration", "5x"]),
      run("meshctl", ["bug-report", "--timeout=soon"]),
    ])
    expect(duration.code).toBe(1)
    expect(duration.stdout + duration.stderr).toContain('--duration: unknown unit "x" in duration "5x"')
    expect(timeout.code).toBe(1)
    expect(timeout.stdout + timeout.stderr).toContain('--timeout: invalid duration "soon"')
  })
})
