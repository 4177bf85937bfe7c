/**
 * What one file may cost to read: the size limit, the bound on alias expansion ("billion
 * laughs"), one issue per broken document however much junk it holds, and large files parsed in
 * batches of documents with the same documents, indexes and lines as a whole-file parse.
 */
import { describe, expect, it } from "vitest"
import { parseAllDocuments } from "yaml"
import { documentBatches } from "../../../src/services/config-model/document-batches.js"
import { parseConfigDocuments, parseConfigSteps, validateDocument } from "../../../src/services/config-model/parse.js"
import {
  MAX_ALIAS_EXPANSION_NODES,
  MAX_CONFIG_FILE_BYTES,
  MAX_DOCUMENT_NODES,
  MAX_NESTING_DEPTH,
} from "../../../src/services/config-model/yaml-limits.js"
import { billionLaughs } from "./helpers.js"

const virtualService = (i: number) =>
  `apiVersion: networking.mesh.io/v1\nkind: VirtualService\nmetadata: {name: vs-${i}, namespace: default}\nspec:\n  hosts: [svc-${i}.default.svc.cluster.local]\n  http:\n  - route:\n    - destination: {host: svc-${i}.default.svc.cluster.local}\n`

describe("config file limits", () => {
  it("refuses a billion-laughs file quickly, naming the file, the document and the limit", () => {
    const text = billionLaughs()
    expect(text.length).toBeLessThan(60_000)
    const started = performance.now()
    const result = parseConfigDocuments("mesh/laughs.yaml", text)
    const elapsed = performance.now() - started
    expect(result.resources).toEqual([])
    expect(result.issues).toHaveLength(1)
    expect(result.issues[0]).toMatchObject({ file: "mesh/laughs.yaml", documentIndex: 0, path: "" })
    expect(result.issues[0]?.message).toContain("YAML aliases expand to")
    expect(result.issues[0]?.message).toContain(`over the limit of ${MAX_ALIAS_EXPANSION_NODES} nodes`)
    // Without the bound this expands to ~999k routes and takes seconds; generous for a busy CI.
    expect(elapsed).toBeLessThan(2_500)
  })

  it("refuses the classic exponential form and an alias inside its own anchor", () => {
    let lol = 'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for (let i = 1; i < 10; i++) lol += `a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(",")}]\n`
    const exponential = parseConfigDocuments("lol.yaml", lol)
    expect(exponential.issues.map((i) => i.message)).toEqual([expect.stringContaining("YAML aliases expand to")])
    const recursive = parseConfigDocuments("self.yaml", "a: &a\n  b: *a\n")
    expect(recursive.issues.map((i) => i.message)).toEqual([
      expect.stringContaining("without end (an alias inside its own anchor)"),
    ])
  })

  it("bounds the expansion over the whole file, not per document", () => {
    // Each document adds ~60k nodes: one is fine, the second goes over the file's budget.
    const one = `apiVersion: networking.mesh.io/v1\nkind: ServiceEntry\nmetadata: {name: NAME}\nspec:\n  hosts: [a.example.com]\n  resolution: NONE\n  x-big: &b [${Array.from({ length: 1000 }, (_, i) => i).join(",")}]\n  x-copies: [${Array.from({ length: 60 }, () => "*b").join(",")}]\n`
    const result = parseConfigDocuments("two.yaml", `${one.replace("NAME", "a")}---\n${one.replace("NAME", "b")}`)
    const aliasIssues = result.issues.filter((i) => i.message.startsWith("YAML aliases expand"))
    expect(aliasIssues.map((i) => i.documentIndex)).toEqual([1])
  })

  it("keeps a modest use of anchors and merge keys", () => {
    const text = `apiVersion: networking.mesh.io/v1\nkind: DestinationRule\nmetadata: {name: a}\nspec:\n  host: a.example.com\n  trafficPolicy:\n    connectionPool: &pool\n      tcp: {maxConnections: 10}\n  subsets:\n  - name: v1\n    labels: {version: v1}\n    trafficPolicy:\n      connectionPool:\n        <<: *pool\n`
    expect(parseConfigDocuments("ok.yaml", text).issues).toEqual([])
  })

  it("refuses a file over the size limit without parsing it", () => {
    const text = `# ${"x".repeat(MAX_CONFIG_FILE_BYTES)}\n`
    const result = parseConfigDocuments("big.yaml", text)
    expect(result.resources).toEqual([])
    expect(result.issues).toEqual([
      {
        file: "big.yaml",
        documentIndex: 0,
        path: "",
        message: `file is 4 MiB (${MAX_CONFIG_FILE_BYTES + 3} bytes), over the limit of 4 MiB for one config file: split it into smaller files`,
      },
    ])
  })

  it("reports a binary file as one issue per document, with how many more errors there are", () => {
    const junk = Buffer.alloc(20_000)
    for (let i = 0; i < junk.length; i++) junk[i] = (i * 7919 + (i >> 3) * 104729) % 256
    const result = parseConfigDocuments("blob.yaml", junk.toString("latin1"))
    expect(result.resources).toEqual([])
    const perDocument = new Map<number, number>()
    for (const issue of result.issues)
      perDocument.set(issue.documentIndex, (perDocument.get(issue.documentIndex) ?? 0) + 1)
    expect([...perDocument.values()].every((n) => n === 1)).toBe(true)
    expect(result.issues.length).toBeLessThanOrEqual(5)
    for (const issue of result.issues) expect(issue.message.length).toBeLessThan(400)
  })

  it("refuses a document nested too deep before building it, naming the document, line and limit", () => {
    const deep = `${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}\n`
    const started = performance.now()
    const result = parseConfigDocuments("deep.yaml", deep)
    // Before the bound: seconds, 1.2 GB and a stack overflow while composing.
    expect(performance.now() - started).toBeLessThan(1_000)
    expect(result.resources).toEqual([])
    expect(result.issues).toEqual([
      {
        file: "deep.yaml",
        documentIndex: 0,
        path: "",
        message: `YAML nested more than ${MAX_NESTING_DEPTH} levels deep (collections inside collections), over the limit of ${MAX_NESTING_DEPTH}: document not read (at line 1)`,
      },
    ])
  })

  it("refuses only the deep document of a file, in every nested form, and keeps the others", () => {
    const forms = [
      `spec: {a: ${"{a: ".repeat(200)}1${"}".repeat(200)}}`,
      `spec:\n${"  - ".repeat(1)}${"- ".repeat(200)}x`,
      `spec:\n${Array.from({ length: 200 }, (_, i) => `${" ".repeat(i + 2)}a:`).join("\n")} 1`,
    ]
    for (const form of forms) {
      const text = [virtualService(1), `# deep\n${form}\n`, virtualService(2)].join("---\n")
      const result = parseConfigDocuments("mixed.yaml", text)
      expect(result.resources.map((r) => r.meta.name)).toEqual(["vs-1", "vs-2"])
      expect(result.issues).toEqual([
        expect.objectContaining({
          documentIndex: 1,
          message: expect.stringContaining(`over the limit of ${MAX_NESTING_DEPTH}`),
        }),
      ])
    }
  })

  it("refuses an already-parsed object (an orchestrator object) nested too deep before validating it", () => {
    let deep: unknown = "x"
    for (let i = 0; i < 200_000; i++) deep = [deep]
    const object = {
      apiVersion: "networking.mesh.io/v1",
      kind: "VirtualService",
      metadata: { name: "deep", namespace: "default" },
      spec: { hosts: ["a"], x: deep },
    }
    expect(validateDocument("orchestrator:deep", 0, object).issues).toEqual([
      {
        file: "orchestrator:deep",
        documentIndex: 0,
        kind: "VirtualService",
        namespace: "default",
        name: "deep",
        path: "",
        message: `nested more than ${MAX_NESTING_DEPTH} levels deep (objects and arrays inside each other), over the limit of ${MAX_NESTING_DEPTH}: not validated`,
      },
    ])
  })

  it("refuses a document of more nodes than the limit, on the fast and the slow reader", () => {
    const flat = `[${"1,".repeat(MAX_DOCUMENT_NODES)}1]\n`
    // A merge key sends a text to the `yaml` library (the slow reader) unread by js-yaml.
    for (const text of [flat, `# <<\n${flat}`]) {
      const started = performance.now()
      const result = parseConfigDocuments("flat.yaml", text)
      expect(performance.now() - started).toBeLessThan(5_000)
      expect(result.issues).toEqual([
        expect.objectContaining({
          documentIndex: 0,
          message: expect.stringContaining(`over the limit of ${MAX_DOCUMENT_NODES} nodes in one document`),
        }),
      ])
    }
  })
})

describe("parsing a large file in batches of documents", () => {
  const many = Array.from({ length: 2_000 }, (_, i) => virtualService(i))
  const text = `# a comment before the first document\n${many.join("---\n")}---\n---\nkind: [unclosed\n`

  it("splits only at document starts, into batches that add up to the text", () => {
    const batches = documentBatches(text)
    expect(batches.length).toBeGreaterThan(5)
    expect(batches.map((b) => b.text).join("")).toBe(text)
    for (const batch of batches.slice(1)) expect(batch.text.startsWith("---\n")).toBe(true)
    let lines = 0
    for (const batch of batches) {
      expect(batch.lineOffset).toBe(lines)
      lines += batch.text.split("\n").length - 1
    }
    // Directives belong to the document after them: such a text is not split.
    expect(documentBatches(`%YAML 1.2\n${text}`)).toHaveLength(1)
  })

  it("gives the documents, indexes and lines of a whole-file parse, a batch per step", () => {
    let steps = 0
    const generator = parseConfigSteps("many.yaml", text)
    let step = generator.next()
    while (step.done !== true) {
      steps++
      step = generator.next()
    }
    const result = step.value
    expect(steps).toBe(documentBatches(text).length)
    expect(result.resources).toHaveLength(2_000)
    expect(result.resources.map((r) => r.source?.documentIndex)).toEqual(many.map((_, i) => i))
    // The line the yaml library reports reading the whole text at once.
    const whole = parseAllDocuments(text)
    expect(whole).toHaveLength(2_002)
    const lastLine = whole[2_001]?.errors[0]?.linePos?.[0]?.line
    expect(lastLine).toBeGreaterThan(18_000)
    expect(result.issues).toEqual([
      expect.objectContaining({
        documentIndex: 2_001,
        message: expect.stringMatching(new RegExp(`^YAML syntax error at line ${lastLine}: `)),
      }),
    ])
  })
})
