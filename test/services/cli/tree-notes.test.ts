/**
 * Aliases and group flags (services/cli/command-model.ts `annotate`): an alias command folds
 * into its canonical sibling, is accepted on the command line and listed beside its command; a
 * group's flags show in its help and are accepted before the subcommand, which receives them.
 */
import { describe, expect, it } from "vitest"
import { checkArgv } from "../../../src/services/cli/argv.js"
import { annotate, type CommandModel, type FlagModel } from "../../../src/services/cli/command-model.js"
import { renderHelp } from "../../../src/services/cli/help.js"

const flag = (name: string, extra: Partial<FlagModel> = {}): FlagModel => ({
  names: [`--${name}`],
  valueName: "string",
  repeated: false,
  description: `the ${name} of the thing`,
  default: "",
  env: undefined,
  ...extra,
})
const context = flag("context")
const selector = flag("selector", { names: ["--selector", "-l"], default: "app=meshd" })

const log = (name: string): CommandModel => ({
  name,
  description: "Log levels",
  flags: [selector, flag("level"), context],
  args: "[<pod>]",
  children: [],
})
const admin = (name: string): CommandModel => ({
  name,
  description: "Manage the control plane",
  flags: [],
  args: "",
  children: [log("log"), log("l")],
})
const validate = (name: string): CommandModel => ({
  name,
  description: "Validate files",
  flags: [flag("filename", { names: ["--filename", "-f"], repeated: true }), context],
  args: "",
  children: [],
})
const raw: CommandModel = {
  name: "ctl",
  description: "",
  flags: [],
  args: "",
  children: [admin("admin"), admin("meshd"), validate("validate"), validate("v")],
}
const tree = annotate(raw, {
  aliases: { admin: ["meshd"], "admin log": ["l"], validate: ["v"] },
  groupFlags: { "": ["--context"], admin: ["--selector"] },
})

const run = (args: ReadonlyArray<string>) => {
  const outcome = checkArgv(tree, args)
  if (outcome._tag !== "Run") throw new Error(`expected Run, got ${JSON.stringify(outcome)}`)
  return outcome.argv
}

describe("annotate", () => {
  it("folds aliases into their command and attaches group flags from the commands below", () => {
    expect(tree.children.map((c) => [c.name, c.aliases])).toEqual([
      ["admin", ["meshd"]],
      ["validate", ["v"]],
    ])
    expect(tree.children[0]!.children.map((c) => [c.name, c.aliases])).toEqual([["log", ["l"]]])
    expect(tree.groupFlags).toEqual([context])
    expect(tree.children[0]!.groupFlags).toEqual([selector])
  })
})

describe("checkArgv with aliases and group flags", () => {
  it("accepts an alias as typed (the alias command exists in the real tree)", () => {
    expect(run(["meshd", "l", "pod-1"])).toEqual(["meshd", "l", "pod-1"])
    expect(run(["v", "-f", "a.yaml"])).toEqual(["v", "-f", "a.yaml"])
  })

  it("moves a group's flags given before the subcommand after it", () => {
    expect(run(["--context", "c1", "validate", "-f", "a.yaml"])).toEqual([
      "validate",
      "--context",
      "c1",
      "-f",
      "a.yaml",
    ])
    expect(run(["admin", "-l", "app=x", "log", "pod"])).toEqual(["admin", "log", "-l", "app=x", "pod"])
    expect(run(["--context=c", "meshd", "--selector", "s", "l"])).toEqual([
      "meshd",
      "l",
      "--context",
      "c",
      "--selector",
      "s",
    ])
  })

  it("keeps the last of a group flag given before and after the subcommand", () => {
    expect(run(["admin", "-l", "a", "log", "-l", "b"])).toEqual(["admin", "log", "-l", "b"])
  })

  it("refuses a flag that no group on the path gives, suggesting from the group's flags", () => {
    const outcome = checkArgv(tree, ["admin", "--selectr", "x", "log"])
    expect(outcome).toMatchObject({
      _tag: "Usage",
      message: 'unknown flag --selectr for "ctl admin"; did you mean --selector?',
    })
    expect(checkArgv(tree, ["--level", "x", "admin", "log"])._tag).toBe("Usage")
  })

  it("suggests an alias for a mistyped command", () => {
    expect(checkArgv(tree, ["vv"])).toMatchObject({
      _tag: "Usage",
      message: 'unknown command "vv" for "ctl"; did you mean v?',
    })
  })
})

describe("help with aliases and group flags", () => {
  const style = { width: 80, color: false }
  it("lists each alias beside its command, once", () => {
    const text = renderHelp([tree], style)
    expect(text).toMatch(/^ {2}admin, meshd {4}Manage the control plane$/m)
    expect(text).toMatch(/^ {2}validate, v {5}Validate files$/m)
    expect(text).not.toMatch(/^ {2}meshd /m)
    expect(text).toContain("  --context string")
  })

  it("shows a group's own flags and a command's aliases in its help", () => {
    const text = renderHelp([tree, tree.children[0]!], style)
    expect(text).toContain("Aliases:\n  admin, meshd")
    expect(text).toContain("Usage:\n  ctl admin <command> [flags]")
    expect(text).toContain("  -l, --selector string")
    expect(text).toContain('(default: "app=meshd")')
    expect(text).not.toContain("--level")
  })
})
