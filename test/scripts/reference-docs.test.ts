/** docs/reference.md is generated from the flag and env definitions; it must not drift. */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { expect, it } from "vitest"
import { ROOT } from "../support/processes.js"

it("docs/reference.md matches the definitions (regenerate with `npm run docs`)", () => {
  const generated = execFileSync(process.execPath, [join(ROOT, "dist", "scripts", "gen-docs.mjs")], {
    encoding: "utf8",
  })
  const committed = readFileSync(join(ROOT, "docs", "reference.md"), "utf8")
  expect(committed === generated, "docs/reference.md is stale: run `npm run docs`").toBe(true)
  expect(generated).toContain("`PILOT_DEBOUNCE_AFTER` | duration | `100ms`")
  expect(generated).toContain("--keepaliveMaxServerConnectionAge")
})
