/** The interpreter's bounds: each refuses its hostile template with the bound named, never a partial output. */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  DEFAULT_RENDER_LIMITS,
  parseInjectionTemplate,
  type RenderLimits,
  renderTemplate,
  templateFunctions,
} from "../../../../src/services/injection/template/index.js"
import { MAX_PARSE_DEPTH } from "../../../../src/services/injection/template/parse.js"

const functions = templateFunctions({ env: {}, protoJson: () => undefined, proxyContainerName: "mesh-proxy" })

const run = (text: string, limits: Partial<RenderLimits> = {}, data: unknown = {}): Either.Either<string, string> => {
  const parsed = parseInjectionTemplate("hostile", text)
  if (Either.isLeft(parsed)) return Either.left(parsed.left.message)
  return Either.mapLeft(
    renderTemplate(parsed.right, data, { functions, limits: { ...DEFAULT_RENDER_LIMITS, ...limits } }),
    (e) => e.message,
  )
}

const refusal = (result: Either.Either<string, string>): string => (Either.isLeft(result) ? result.left : "rendered")

describe("template bounds", () => {
  it("range iterations, nested ranges multiplying", () => {
    const nested = "{{ range until 100 }}{{ range until 100 }}{{ range until 100 }}{{ end }}{{ end }}{{ end }}"
    expect(refusal(run(nested))).toContain("more than 100000 range iterations")
    const small = "{{ range until 20 }}{{ range until 20 }}{{ range until 20 }}{{ end }}{{ end }}{{ end }}"
    expect(Either.isRight(run(small, { maxRangeIterations: 8_420 }))).toBe(true)
    expect(refusal(run(small, { maxRangeIterations: 8_419 }))).toContain("more than 8419 range iterations")
    expect(refusal(run("{{ range 200000 }}{{ end }}"))).toContain("range over 200000 is more than 100000 iterations")
  })

  it("output characters and the size of any value", () => {
    expect(refusal(run("{{ range 20 }}0123456789{{ end }}", { maxOutputChars: 100 }))).toContain(
      "output over the 100-character bound",
    )
    expect(Either.getOrThrow(run("{{ range 10 }}0123456789{{ end }}", { maxOutputChars: 100 })).length).toBe(100)
    expect(
      refusal(run('{{ $s := "ab" }}{{ range 10 }}{{ $s = printf "%s%s" $s $s }}{{ end }}', { maxOutputChars: 1000 })),
    ).toContain("printf returned a value over the 1000-character bound")
    expect(refusal(run('{{ indent 100000000 "a\\nb" }}'))).toContain("indented text of")
    expect(refusal(run('{{ repeat 100000000 "ab" }}'))).toContain("repeated text of")
    expect(refusal(run("{{ until 100000000 }}"))).toContain("list of 100000000")
  })

  it("work: steps, a list copied again on every append included", () => {
    const quadratic = "{{ $l := list }}{{ range 50000 }}{{ $l = append $l . }}{{ end }}"
    expect(refusal(run(quadratic))).toContain("steps (the template's work bound)")
    expect(refusal(run("{{ range 1000 }}{{ if . }}{{ end }}{{ end }}", { maxSteps: 500 }))).toContain(
      "more than 500 steps",
    )
  })

  it("nested template calls and parse nesting", () => {
    expect(refusal(run('{{ define "a" }}{{ template "a" . }}{{ end }}{{ template "a" . }}'))).toContain(
      "exceeded maximum template depth (32)",
    )
    expect(refusal(run('{{ define "a" }}{{ include "a" . }}{{ end }}{{ include "a" . }}'))).toContain(
      "maximum template depth",
    )
    const deep = `${"{{ if true }}".repeat(MAX_PARSE_DEPTH + 1)}${"{{ end }}".repeat(MAX_PARSE_DEPTH + 1)}`
    expect(refusal(run(deep))).toContain(`nesting deeper than ${MAX_PARSE_DEPTH} levels`)
    const parens = `{{ ${"(".repeat(MAX_PARSE_DEPTH + 1)}1${")".repeat(MAX_PARSE_DEPTH + 1)} }}`
    expect(refusal(run(parens))).toContain("nesting deeper")
    expect(Either.getOrThrow(run(`${"{{ if true }}".repeat(50)}ok${"{{ end }}".repeat(50)}`))).toBe("ok")
  })
})
