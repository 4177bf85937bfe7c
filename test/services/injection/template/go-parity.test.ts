/**
 * The interpreter against the reference's engine: each case of go-parity.json holds what Go's
 * text/template with sprig wrote for it (recorded by scripts/template-parity/run.sh). Outputs must
 * be identical; where Go fails, we must fail too. The deliberate differences are listed.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  parseInjectionTemplate,
  renderTemplate,
  templateFunctions,
} from "../../../../src/services/injection/template/index.js"

interface Row {
  readonly t: string
  readonly d: unknown
  readonly go: string
}

const rows = JSON.parse(readFileSync(join(import.meta.dirname, "go-parity.json"), "utf8")) as ReadonlyArray<Row>

/** Template text → why our output differs from Go's. */
const DELIBERATE: Readonly<Record<string, string>> = {
  // Go holds JSON numbers as float64 and prints a million as 1e+06; we print integers whole.
  "{{ .missing }}|{{ .m.deeper }}|{{ .list }}|{{ .map }}|{{ .f }}|{{ .big }}|{{ .t }}|{{ .n }}": "1000000",
  // toYaml is the reference injector's function, not sprig's (the Go harness has sprig only).
  "{{ toYaml .m }}": "a:\n  c: d\nb:\n  - 1\n  - x\n",
}

const functions = templateFunctions({ env: {}, protoJson: () => undefined, proxyContainerName: "mesh-proxy" })

const ours = (row: Row): string => {
  const parsed = parseInjectionTemplate("t", row.t)
  if (Either.isLeft(parsed)) return `ERR: ${parsed.left.message}`
  return Either.match(renderTemplate(parsed.right, row.d, { functions }), {
    onLeft: (e) => `ERR: ${e.message}`,
    onRight: (s) => s,
  })
}

describe("parity with Go's text/template and sprig", () => {
  it("has the recorded cases", () => {
    expect(rows.length).toBeGreaterThanOrEqual(50)
  })

  for (const [i, row] of rows.entries()) {
    it(`#${i} ${row.t.slice(0, 60)}`, () => {
      const out = ours(row)
      const deliberate = DELIBERATE[row.t]
      if (deliberate !== undefined) {
        expect(out).toContain(deliberate)
        expect(out).not.toBe(row.go)
      } else if (row.go.startsWith("ERR: ")) {
        expect(out).toMatch(/^ERR: template: /)
      } else {
        expect(out).toBe(row.go)
      }
    })
  }
})
