import { describe, expect, it } from "vitest"
import { checkArgv, closest } from "../../../src/services/cli/argv.js"
import type { CommandModel, FlagModel } from "../../../src/services/cli/command-model.js"

const flag = (name: string, extra: Partial<FlagModel> = {}): FlagModel => ({
  names: [`--${name}`],
  valueName: "string",
  repeated: false,
  description: `the ${name}`,
  default: "",
  env: undefined,
  ...extra,
})

const discovery: CommandModel = {
  name: "discovery",
  description: "",
  flags: [
    flag("configDir"),
    flag("registries", { repeated: true }),
    flag("profile", { valueName: undefined }),
    flag("namespace", { names: ["--namespace", "-n"] }),
  ],
  args: "",
  children: [],
}
const request: CommandModel = { name: "request", description: "", flags: [], args: "<method> <path>", children: [] }
const root: CommandModel = { name: "prog", description: "", flags: [], args: "", children: [discovery, request] }

const argvOf = (args: ReadonlyArray<string>) => {
  const outcome = checkArgv(root, args)
  if (outcome._tag !== "Run") throw new Error(`expected Run, got ${JSON.stringify(outcome)}`)
  return outcome.argv
}
const messageOf = (args: ReadonlyArray<string>) => {
  const outcome = checkArgv(root, args)
  if (outcome._tag !== "Usage") throw new Error(`expected Usage, got ${JSON.stringify(outcome)}`)
  return outcome.message
}

describe("checkArgv", () => {
  it("refuses flags of another case, with the flag meant", () => {
    expect(messageOf(["discovery", "--configdir", "x"])).toBe(
      'unknown flag --configdir for "prog discovery"; did you mean --configDir?',
    )
    expect(messageOf(["discovery", "--CONFIGDIR=x"])).toContain("did you mean --configDir?")
    expect(messageOf(["discovery", "-configDir", "x"])).toContain("did you mean --configDir?")
    expect(messageOf(["discovery", "--nothing-like-it"])).toBe('unknown flag --nothing-like-it for "prog discovery"')
  })

  it("splits --flag=value for every flag, booleans included", () => {
    expect(argvOf(["discovery", "--registries=Mock", "--configDir=a=b", "--profile=false", "-n=ns"])).toEqual([
      "discovery",
      "--registries",
      "Mock",
      "--configDir",
      "a=b",
      "--profile",
      "false",
      "-n",
      "ns",
    ])
  })

  it("keeps every value of a list flag and the last of a single-valued flag", () => {
    expect(argvOf(["discovery", "--registries", "A", "--configDir", "x", "--registries=B", "--configDir=y"])).toEqual([
      "discovery",
      "--registries",
      "A",
      "--registries",
      "B",
      "--configDir",
      "y",
    ])
  })

  it("reads a boolean's value only when it is true or false", () => {
    expect(argvOf(["discovery", "--profile", "true"])).toEqual(["discovery", "--profile", "true"])
    expect(messageOf(["discovery", "--profile", "yes"])).toBe('"prog discovery" takes no arguments, got "yes"')
  })

  it("asks for help, anywhere on the line, and for a group invoked alone", () => {
    expect(checkArgv(root, ["discovery", "--configdir", "--help"])).toMatchObject({ _tag: "Usage" })
    expect(checkArgv(root, ["discovery", "--help"])).toMatchObject({ _tag: "Help", path: [root, discovery] })
    expect(checkArgv(root, ["-h"])).toMatchObject({ _tag: "Help", path: [root] })
    expect(checkArgv(root, [])).toMatchObject({ _tag: "Help", path: [root] })
  })

  it("passes positionals and everything after --", () => {
    expect(argvOf(["request", "GET", "/debug/syncz"])).toEqual(["request", "GET", "/debug/syncz"])
    expect(argvOf(["request", "GET", "--", "--odd"])).toEqual(["request", "GET", "--", "--odd"])
  })

  it("refuses an unknown subcommand, with the one meant", () => {
    expect(messageOf(["discovry"])).toBe('unknown command "discovry" for "prog"; did you mean discovery?')
    expect(messageOf(["disc"])).toContain("did you mean discovery?")
  })

  it("requires a value for a valued flag", () => {
    expect(messageOf(["discovery", "--configDir"])).toBe("flag --configDir needs a value (string)")
  })
})

describe("closest", () => {
  it("prefers a case-insensitive match, then two edits, then a unique prefix", () => {
    expect(closest("--grpcaddr", ["--grpcAddr", "--httpAddr"])).toBe("--grpcAddr")
    expect(closest("--grpAddr", ["--grpcAddr", "--httpAddr"])).toBe("--grpcAddr")
    expect(closest("--mon", ["--monitoringAddr", "--meshConfig"])).toBe("--monitoringAddr")
    expect(closest("--zzz", ["--grpcAddr"])).toBeUndefined()
  })
})
