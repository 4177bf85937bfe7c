/**
 * Completion scripts loaded by the real shells: bash and zsh source them and complete
 * subcommands and flags; fish loads them and `complete -C` answers.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { run } from "../support/processes.js"

const has = (shell: string): boolean => {
  try {
    execFileSync("which", [shell], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

const dir = mkdtempSync(join(tmpdir(), "mesh-completion-"))
const script = async (program: string, shell: string, extra: ReadonlyArray<string> = []) => {
  const result = await run(program, ["completion", shell, ...extra])
  expect(result.code).toBe(0)
  const path = join(dir, `${program}.${shell}${extra.length > 0 ? ".nodesc" : ""}`)
  writeFileSync(path, result.stdout)
  return { path, text: result.stdout }
}

const PROGRAMS = ["mesh-discovery", "mesh-agent", "install-cni", "meshctl"] as const

describe.concurrent("bash", () => {
  it.each(PROGRAMS)("%s: completes subcommands and flags", async (program) => {
    const { path } = await script(program, "bash")
    const fn = `_${program}_bash_completions`
    const complete = (words: ReadonlyArray<string>) =>
      execFileSync(
        "bash",
        [
          "-c",
          `source ${path}; COMP_WORDS=(${words.join(" ")}); COMP_CWORD=${words.length - 1}; ${fn} ${program} "${words.at(-1)}" "${words.at(-2)}"; echo "\${COMPREPLY[*]}"`,
        ],
        { encoding: "utf8" },
      ).trim()
    expect(complete([program, "vers"])).toBe("version")
    expect(complete([program, "version", "--sh"])).toBe("--short")
    expect(complete([program, "completion", "z"])).toBe("zsh")
    expect(complete([program, "completion", "fish", "--no-d"])).toBe("--no-descriptions")
  })
})

describe.skipIf(!has("zsh")).concurrent("zsh", () => {
  it.each(PROGRAMS)("%s: the script loads without errors, with and without descriptions", async (program) => {
    for (const extra of [[], ["--no-descriptions"]]) {
      const { path, text } = await script(program, "zsh", extra)
      const out = execFileSync(
        "zsh",
        [
          "-c",
          `autoload -U compinit && compinit -u -D; source ${path} && echo loaded; whence -w _${program}_zsh_completions`,
        ],
        { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
      )
      expect(out).toContain("loaded")
      expect(out).toContain("function")
      if (extra.length > 0) expect(text).not.toMatch(/'--\w[^']*\[/)
    }
  })
})

describe.skipIf(!has("fish")).concurrent("fish", () => {
  it.each(PROGRAMS)("%s: complete -C answers subcommands and flags", async (program) => {
    const { path } = await script(program, "fish")
    const ask = (line: string) =>
      execFileSync("fish", ["--no-config", "-c", `source ${path}; complete -C '${line}'`], { encoding: "utf8" })
    expect(ask(`${program} vers`)).toMatch(/^version\t/m)
    expect(ask(`${program} version --sh`)).toMatch(/^--short/m)
    const { path: bare } = await script(program, "fish", ["--no-descriptions"])
    const plain = execFileSync("fish", ["--no-config", "-c", `source ${bare}; complete -C '${program} vers'`], {
      encoding: "utf8",
    })
    expect(plain.trim()).toBe("version")
  })
})

describe("powershell", () => {
  it("derives its completer from the command table", async () => {
    const { text } = await script("meshctl", "powershell")
    expect(text).toContain("Register-ArgumentCompleter -Native -CommandName 'meshctl'")
    expect(text).toContain("'meshctl,version' = 'meshctl__version'")
    expect(text).toContain("'--remote'")
  })
})
