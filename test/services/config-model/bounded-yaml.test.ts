/**
 * YAML read within the nesting and node bounds: both readers (js-yaml's events, the `yaml`
 * library driven token by token) stop at the same depth, before the document is built, and the
 * `yaml` library path gives what `parseAllDocuments` / `parseDocument` give when no bound is hit.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { parseAllDocuments, parseDocument } from "yaml"
import {
  jsYamlDocumentsBounded,
  parseDocumentBounded,
  parseDocumentsBounded,
} from "../../../src/services/config-model/bounded-yaml.js"
import { jsonTextDepthOver, valueDepthOver } from "../../../src/services/config-model/json-limits.js"
import { readYamlDocuments } from "../../../src/services/config-model/parse.js"
import { GO_JS_YAML_SCHEMA } from "../../../src/services/config-model/yaml-dialect.js"
import { MAX_DOCUMENT_NODES, MAX_NESTING_DEPTH } from "../../../src/services/config-model/yaml-limits.js"

const JS_YAML = { schema: GO_JS_YAML_SCHEMA, maxAliases: 0 }

/** The nested forms of the finding, `depth` collections deep. */
const nested = {
  flowSeq: (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}\n`,
  flowMap: (depth: number) => `${"{a: ".repeat(depth)}1${"}".repeat(depth)}\n`,
  compactSeq: (depth: number) => `${"- ".repeat(depth)}x\n`,
  indented: (depth: number) => Array.from({ length: depth }, (_, i) => `${" ".repeat(i)}a:`).join("\n") + " 1\n",
}

describe("nesting bound", () => {
  for (const [form, make] of Object.entries(nested)) {
    it(`reads ${form} at ${MAX_NESTING_DEPTH} levels and refuses ${MAX_NESTING_DEPTH + 1}, on both readers`, () => {
      const atLimit = make(MAX_NESTING_DEPTH)
      expect(parseDocumentsBounded(atLimit).problem).toBeUndefined()
      expect(readYamlDocuments(atLimit)).toMatchObject({ _tag: "Right" })
      const over = make(MAX_NESTING_DEPTH + 1)
      expect(parseDocumentsBounded(over).problem).toMatchObject({
        documentIndex: 0,
        message: expect.stringContaining(`over the limit of ${MAX_NESTING_DEPTH}`),
      })
      // js-yaml's own maxDepth refuses it: the caller then takes the bounded `yaml` path.
      expect(jsYamlDocumentsBounded(over, JS_YAML)).toBeUndefined()
      expect(readYamlDocuments(over)).toEqual(Either.left(expect.stringContaining("over the limit of 100")))
    })
  }

  it("stops a million levels in milliseconds, naming the document and line", () => {
    const text = `a: 1\n---\nb: 2\n---\nc: ${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}\n`
    const started = performance.now()
    const { documents, problem } = parseDocumentsBounded(text)
    expect(performance.now() - started).toBeLessThan(1_000)
    expect(problem).toMatchObject({ documentIndex: 2, line: 5 })
    expect(documents.map((d) => d.toJS())).toEqual([{ a: 1 }, { b: 2 }])
  })
})

describe("node bound", () => {
  it("refuses a document of more nodes than the bound on both readers, keeping the documents before it", () => {
    const items = `[${Array.from({ length: MAX_DOCUMENT_NODES + 10 }, () => "1").join(",")}]\n`
    const text = `ok: true\n---\n${items}`
    const fast = jsYamlDocumentsBounded(text, JS_YAML)
    expect(fast).toEqual({
      problem: { documentIndex: 1, line: 3, message: expect.stringContaining(`${MAX_DOCUMENT_NODES} nodes`) },
    })
    const slow = parseDocumentsBounded(text)
    expect(slow.problem).toMatchObject({ documentIndex: 1, message: expect.stringContaining("nodes") })
    expect(slow.documents.map((d) => d.toJS())).toEqual([{ ok: true }])
  })

  it("counts nodes per document: many documents under the bound are read", () => {
    const half = `[${Array.from({ length: MAX_DOCUMENT_NODES / 2 }, () => "1").join(",")}]\n`
    const text = `${half}---\n${half}---\n${half}`
    expect(parseDocumentsBounded(text).problem).toBeUndefined()
    expect(jsYamlDocumentsBounded(text, JS_YAML)).toHaveProperty("documents")
  })
})

describe("parity with the yaml library when no bound is hit", () => {
  const texts = [
    "a: 1\n---\n- b\n- c\n",
    "# only a comment\n",
    "",
    "a: [1, 2\n---\nb: {c: d}\n",
    "%YAML 1.2\n---\na: &x 1\nb: *x\n...\n",
    "a: 1\na: 2\n",
    "key: |\n  text\n  more\nother: >\n  folded\n",
  ]
  for (const text of texts) {
    it(`parses ${JSON.stringify(text).slice(0, 40)} as parseAllDocuments does`, () => {
      const ours = parseDocumentsBounded(text, { uniqueKeys: true })
      const theirs = parseAllDocuments(text, { uniqueKeys: true })
      const list = Array.isArray(theirs) ? theirs : []
      expect(ours.problem).toBeUndefined()
      expect(ours.documents.map((d) => d.toJS())).toEqual(list.map((d) => d.toJS()))
      expect(ours.documents.map((d) => d.errors.map((e) => [e.code, e.message, e.linePos]))).toEqual(
        list.map((d) => d.errors.map((e) => [e.code, e.message, e.linePos])),
      )
      const one = parseDocumentBounded(text, { uniqueKeys: true })
      const single = parseDocument(text, { uniqueKeys: true })
      expect("document" in one && one.document.toJS()).toEqual(single.toJS())
      expect("document" in one && one.document.errors.map((e) => e.message)).toEqual(
        single.errors.map((e) => e.message),
      )
    })
  }
})

describe("JSON nesting", () => {
  it("measures depth on the text, skipping strings and their escapes", () => {
    // The brackets and the escaped quote inside the string do not count.
    expect(jsonTextDepthOver(`{"a": [[["[[[[\\"[[["]]]}`, 4)).toBeUndefined()
    expect(jsonTextDepthOver(`{"a": [[[[1]]]]}`, 4)).toBe(5)
    const started = performance.now()
    expect(jsonTextDepthOver("[".repeat(2_000_000), MAX_NESTING_DEPTH)).toBe(MAX_NESTING_DEPTH + 1)
    expect(performance.now() - started).toBeLessThan(200)
  })

  it("measures depth of a parsed value without recursion", () => {
    let deep: unknown = 1
    for (let i = 0; i < 200_000; i++) deep = [deep]
    expect(valueDepthOver(deep, MAX_NESTING_DEPTH)).toBe(true)
    expect(valueDepthOver({ a: [{ b: 1 }] }, 3)).toBe(false)
    expect(valueDepthOver({ a: [{ b: {} }] }, 3)).toBe(true)
  })
})
