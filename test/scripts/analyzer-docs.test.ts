/**
 * docs/analyzers.md is generated from the analyzer registry (issue 35): it must not drift, every
 * analyzer of the registry must be someone's counterpart, every counterpart named must exist,
 * and every code must have its meaning.
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { CODE_MEANINGS, COUNTERPARTS, SCHEMA_VALIDATION } from "../../src/services/analysis/analyzer-docs.js"
import { ALL_ANALYZERS } from "../../src/services/analysis/analyzers/index.js"
import { MessageTypes } from "../../src/services/analysis/message-types.js"
import { ROOT } from "../support/processes.js"

describe("docs/analyzers.md", () => {
  it("matches the registry (regenerate with `node dist/scripts/gen-analyzer-docs.mjs > docs/analyzers.md`)", () => {
    const generated = execFileSync(process.execPath, [join(ROOT, "dist", "scripts", "gen-analyzer-docs.mjs")], {
      encoding: "utf8",
    })
    const committed = readFileSync(join(ROOT, "docs", "analyzers.md"), "utf8")
    expect(committed === generated, "docs/analyzers.md is stale: regenerate it").toBe(true)
    expect(generated).toContain("| `gateway.SecretAnalyzer` | `gateway.SecretAnalyzer` | MSH0101, MSH0161 |")
  })

  it("names every analyzer of the registry, and only analyzers that exist", () => {
    const named = new Set(COUNTERPARTS.flatMap((c) => c.ours))
    const registry = new Set(ALL_ANALYZERS.map((a) => a.name))
    expect(ALL_ANALYZERS.map((a) => a.name).filter((n) => !named.has(n))).toEqual([])
    expect([...named].filter((n) => n !== SCHEMA_VALIDATION && !registry.has(n))).toEqual([])
    expect(registry.size).toBe(ALL_ANALYZERS.length)
  })

  it("gives every message code a meaning", () => {
    expect(Object.keys(MessageTypes).filter((name) => CODE_MEANINGS[name] === undefined)).toEqual([])
  })
})
