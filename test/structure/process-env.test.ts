/**
 * Settings are read once (docs/architecture.md, "Effect conventions"; issue 38): every variable a
 * binary reads is in its env table under src/services/config/ and reaches code through a config
 * Tag, so `docs/reference.md` lists it and a test sets it with `X.layer(overrides)`. This fails on
 * any `process.env` in code under src/ outside src/services/config/, except the pass-through uses
 * below, which hand the environment on as a whole rather than read a setting from it.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"

/** File → (number of `process.env` uses, why each is a pass-through and not a setting). */
const ALLOWED: ReadonlyMap<string, { readonly uses: number; readonly why: string }> = new Map([
  [
    "src/layers/agent/setup.ts",
    {
      uses: 1,
      why: "the agent's whole environment feeds the proxy bootstrap's node metadata (the spec's MESH_META_* and friends)",
    },
  ],
  [
    "src/layers/agent/proxy/supervisor.ts",
    { uses: 1, why: "the proxy child inherits the agent's environment, plus the supervisor's own additions" },
  ],
  [
    "src/layers/cni/plugin-run.ts",
    {
      uses: 1,
      why: "the CNI protocol passes its request as CNI_* variables set by the runtime per call, not settings",
    },
  ],
  [
    "src/layers/introspection-server.ts",
    {
      uses: 2,
      why: "the introspection environment page and its JSON show the process environment (redacted) as it is",
    },
  ],
])

const ROOT = join(import.meta.dirname, "..", "..")
const CONFIG_DIR = "src/services/config/"

const sourceFiles = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith(".ts") ? [relative(ROOT, path).split("\\").join("/")] : []
  })

/** `process.env` uses in code: lines that are comments (`//`, ` * `) do not count. */
const usesIn = (text: string): number =>
  text
    .split("\n")
    .filter((line) => !/^\s*(\/\/|\/?\*)/.test(line))
    .reduce((n, line) => n + (line.match(/\bprocess\.env\b/g)?.length ?? 0), 0)

describe("process.env under src/", () => {
  const found = new Map(
    sourceFiles(join(ROOT, "src"))
      .filter((file) => !file.startsWith(CONFIG_DIR))
      .map((file) => [file, usesIn(readFileSync(join(ROOT, file), "utf8"))] as const)
      .filter(([, uses]) => uses > 0),
  )

  it("is read only in src/services/config/ and the listed pass-through uses", () => {
    const unexpected = [...found]
      .filter(([file, uses]) => uses > (ALLOWED.get(file)?.uses ?? 0))
      .map(
        ([file, uses]) =>
          `${file}: ${uses} use(s) of process.env; read the variable through its env table and config Tag`,
      )
    expect(unexpected).toEqual([])
  })

  it("has no stale allow-list entry", () => {
    const stale = [...ALLOWED]
      .filter(([file, allowed]) => (found.get(file) ?? 0) !== allowed.uses)
      .map(([file, allowed]) => `${file}: allowed ${allowed.uses}, found ${found.get(file) ?? 0}`)
    expect(stale).toEqual([])
  })
})
