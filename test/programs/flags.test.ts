/**
 * Flag spelling and help of the four built binaries: flags are case-sensitive and an unknown
 * or mis-cased one is refused with the flag that was meant; `--flag=value` works for every
 * flag; list flags accumulate when repeated; help is plain text (no colour off a terminal),
 * states every flag's default and description, and keeps lines short.
 */
import { execFile } from "node:child_process"
import { describe, expect, it } from "vitest"
import { binary, ROOT, run } from "../support/processes.js"

const BINARIES = ["mesh-discovery", "mesh-agent", "install-cni", "meshctl"] as const
const ESC = String.fromCharCode(27)

/** Runs a binary with stdout piped (not a terminal) and without NO_COLOR. */
const runPiped = (name: string, args: ReadonlyArray<string>): Promise<{ code: number; stdout: string }> =>
  new Promise((resolve) => {
    const { NO_COLOR: _, FORCE_COLOR: __, ...env } = process.env
    execFile(process.execPath, [binary(name), ...args], { env, cwd: ROOT, timeout: 30_000 }, (error, stdout) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout }),
    )
  })

/** The subcommands each binary's help is checked for, besides the root. */
const COMMANDS: Record<(typeof BINARIES)[number], ReadonlyArray<ReadonlyArray<string>>> = {
  "mesh-discovery": [["discovery"], ["request"], ["version"]],
  "mesh-agent": [["proxy"], ["wait"], ["mesh-iptables"], ["version"]],
  "install-cni": [[], ["version"]],
  meshctl: [["validate"], ["version"], ["completion", "bash"]],
}

describe.concurrent.each(BINARIES)("%s help", (name) => {
  it("is plain text off a terminal, names every flag's default, and keeps lines within 100 columns", async () => {
    for (const command of [[], ...COMMANDS[name]]) {
      const { code, stdout } = await runPiped(name, [...command, "--help"])
      expect(code, `${name} ${command.join(" ")} --help`).toBe(0)
      expect(stdout).not.toContain(ESC)
      expect(stdout).not.toContain("A user-defined piece of text")
      expect(stdout).not.toContain("This setting is optional")
      for (const line of stdout.split("\n")) expect(line.length, line).toBeLessThanOrEqual(100)
      // Every flag entry ("  --name ..." or "  -x, --name ...") is followed by its description, which ends with its default.
      const entries = stdout.split(/\n(?= {2}-)/).slice(1)
      for (const entry of entries) {
        const text = entry.replace(/\s+/g, " ")
        expect(text, entry).toMatch(/\(default[: ]/)
        expect(text.replace(/^ ?\S+(, \S+)?( \S+)? /, "").length, entry).toBeGreaterThan(15)
      }
    }
  })

  it("refuses a mis-cased flag and suggests the right one", async () => {
    const result = await run(name, ["version", "--OUTPUT", "json"])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("unknown flag --OUTPUT")
    expect(result.stderr).toContain("did you mean --output?")
  })
})

describe.concurrent("mesh-discovery discovery flags", () => {
  it.each([["--configdir"], ["--CONFIGDIR"], ["--configDirr"]])("refuses %s, suggesting --configDir", async (flag) => {
    const result = await run("mesh-discovery", ["discovery", "--registries", "Mock", flag, "examples/mesh"])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(`unknown flag ${flag} for "mesh-discovery discovery"; did you mean --configDir?`)
  })

  it("refuses --grpcaddr, suggesting --grpcAddr", async () => {
    const result = await run("mesh-discovery", ["discovery", "--grpcaddr", ":0"])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("did you mean --grpcAddr?")
  })

  it("accepts --flag=value for list flags, and accumulates repeated list flags", async () => {
    // An invalid --httpAddr stops start-up after the other flags were parsed; its message proves they were.
    const single = await run("mesh-discovery", ["discovery", "--registries=Mock", "--httpAddr=bad"])
    expect(single.code).toBe(1)
    expect(single.stderr).toContain('--httpAddr: invalid address "bad"')
    const repeated = await run("mesh-discovery", [
      "discovery",
      "--registries",
      "Mock",
      "--registries=Consul",
      "--httpAddr=bad",
    ])
    expect(repeated.code).toBe(1)
    // The second value reached the registries check: the values accumulated.
    expect(repeated.stderr).toContain('unknown registry "Consul"')
  })

  it("lets a repeated single-valued flag keep its last value", async () => {
    const result = await run("mesh-discovery", ["discovery", "--httpAddr", ":0", "--httpAddr=bad"])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('--httpAddr: invalid address "bad"')
  })

  it("refuses an unknown subcommand with a suggestion", async () => {
    const result = await run("mesh-discovery", ["discovry"])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('unknown command "discovry" for "mesh-discovery"; did you mean discovery?')
  })
})
