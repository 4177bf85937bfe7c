import { describe, expect, it } from "vitest"
import type { CommandModel } from "../../../src/services/cli/command-model.js"
import { renderHelp, wrap } from "../../../src/services/cli/help.js"

const long = "a description long enough to need wrapping at eighty columns, which it does, twice over at least"
const command: CommandModel = {
  name: "discovery",
  description: "Start the server.",
  flags: [
    {
      names: ["--grpcAddr"],
      valueName: "string",
      repeated: false,
      description: long,
      default: ":15010",
      env: undefined,
    },
    {
      names: ["--profile"],
      valueName: undefined,
      repeated: false,
      description: "Profile.",
      default: "false",
      env: undefined,
    },
    {
      names: ["--registries"],
      valueName: "string",
      repeated: true,
      description: "Registries.",
      default: "Orchestrator",
      env: undefined,
    },
    {
      names: ["--clusterID"],
      valueName: "string",
      repeated: false,
      description: "Cluster.",
      default: "Kubernetes",
      env: "CLUSTER_ID",
    },
    {
      names: ["--output", "-o"],
      valueName: "yaml|json",
      repeated: false,
      description: "Format.",
      default: undefined,
      env: undefined,
    },
  ],
  args: "",
  children: [],
}
const root: CommandModel = { name: "prog", description: "The program.", flags: [], args: "", children: [command] }

describe("renderHelp", () => {
  const text = renderHelp([root, command], { width: 80, color: false })

  it("states each flag's default (quoting strings) and its environment variable", () => {
    expect(text).toContain('(default: ":15010")')
    expect(text).toContain("(default: false)")
    expect(text.replace(/\s+/g, " ")).toContain(
      "(default: Orchestrator; repeat the flag or separate values with commas)",
    )
    expect(text).toContain('(default: "Kubernetes"; or $CLUSTER_ID when set)')
    expect(text).toContain("  -o, --output yaml|json\n      Format. (default: none)")
  })

  it("wraps to the width and uses no escape codes unless asked", () => {
    for (const line of text.split("\n")) expect(line.length).toBeLessThanOrEqual(80)
    expect(text).not.toContain("\u001b")
    expect(renderHelp([root, command], { width: 80, color: true })).toContain("\u001b[1mFlags:\u001b[0m")
  })

  it("lists a group's subcommands", () => {
    const group = renderHelp([root], { width: 80, color: false })
    expect(group).toContain("Usage:\n  prog <command>\n")
    expect(group).toContain("  discovery    Start the server.")
  })
})

describe("wrap", () => {
  it("never splits a word and indents every line", () => {
    expect(wrap("aaa bbb ccc", 9, "  ")).toEqual(["  aaa bbb", "  ccc"])
    expect(wrap("averyveryverylongword x", 5, "")).toEqual(["averyveryverylongword", "x"])
  })
})
