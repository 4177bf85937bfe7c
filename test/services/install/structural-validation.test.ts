/** The stand-in for the API server's check of a custom resource against a structural schema. */
import { describe, expect, it } from "vitest"
import {
  patternProblem,
  structuralProblems,
  validateStructural,
} from "../../../src/services/install/structural-validation.js"

const issues = (schema: Record<string, unknown>, value: unknown) =>
  validateStructural(schema, value).issues.map((i) => `${i.path}: ${i.message}`)
const ok = (schema: Record<string, unknown>, value: unknown) => expect(issues(schema, value)).toEqual([])
const refused = (schema: Record<string, unknown>, value: unknown, path: string) =>
  expect(issues(schema, value).map((i) => i.slice(0, i.indexOf(": ")))).toContain(path)

const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object",
  properties,
  ...extra,
})

describe("value validation", () => {
  it("types: integer is a whole number, int-or-string takes both and nothing else", () => {
    ok({ type: "integer" }, 3)
    refused({ type: "integer" }, 3.5, "")
    refused({ type: "string" }, 3, "")
    ok({ "x-kubernetes-int-or-string": true }, "80%")
    ok({ "x-kubernetes-int-or-string": true }, 80)
    refused({ "x-kubernetes-int-or-string": true }, true, "")
    refused({ "x-kubernetes-int-or-string": true }, 1.5, "")
  })

  it("numbers: inclusive and exclusive bounds, multipleOf, int32", () => {
    const s = { type: "number", minimum: 0, maximum: 100 }
    ok(s, 0)
    ok(s, 100)
    refused(s, 100.5, "")
    refused(s, -1, "")
    refused({ type: "number", minimum: 0, exclusiveMinimum: true }, 0, "")
    refused({ type: "number", maximum: 1, exclusiveMaximum: true }, 1, "")
    refused({ type: "integer", multipleOf: 5 }, 7, "")
    refused({ type: "integer", format: "int32" }, 2 ** 31, "")
  })

  it("strings: lengths in code points, RE2-style patterns, enforced formats", () => {
    ok({ type: "string", maxLength: 1 }, "é")
    ok({ type: "string", maxLength: 1 }, "😀")
    refused({ type: "string", minLength: 1 }, "", "")
    refused({ type: "string", pattern: "^[a-f0-9]{64}$" }, "xyz", "")
    ok({ type: "string", pattern: "^$|^[a-f0-9]{4}$" }, "")
    ok({ type: "string", format: "ipv6" }, "::1")
    refused({ type: "string", format: "cidr" }, "10.0.0.0/33", "")
    ok({ type: "string", format: "unknown-to-the-server" }, "anything")
  })

  it("arrays and objects: item and property counts, required, list-type set and map", () => {
    refused({ type: "array", items: { type: "string" }, minItems: 1 }, [], "")
    refused({ type: "array", items: { type: "string" }, maxItems: 1 }, ["a", "b"], "")
    refused({ type: "array", items: { type: "string" } }, ["a", 1], "[1]")
    refused({ type: "array", items: { type: "string" }, "x-kubernetes-list-type": "set" }, ["a", "a"], "[1]")
    const env = {
      type: "array",
      items: obj({ name: { type: "string" }, value: { type: "string" } }),
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["name"],
    }
    refused(env, [{ name: "a" }, { name: "a", value: "b" }], "[1]")
    ok(env, [{ name: "a" }, { name: "b" }])
    const map = { type: "object", additionalProperties: { type: "string" }, minProperties: 1, maxProperties: 2 }
    refused(map, {}, "")
    refused(map, { a: "1", b: "2", c: "3" }, "")
    refused(obj({ a: { type: "string" } }, { required: ["a"] }), {}, ".a")
  })

  it("value validations: not/anyOf/oneOf/allOf over the declared fields", () => {
    const s = obj(
      { a: { type: "string" }, b: { type: "string" }, list: { type: "array", items: { type: "string" } } },
      {
        not: { required: ["a", "list"], properties: { list: { minItems: 1 } } },
        anyOf: [{ required: ["a"] }, { required: ["b"] }],
        allOf: [{ properties: { a: { minLength: 2 } } }],
      },
    )
    ok(s, { a: "xx", list: [] })
    refused(s, { a: "xx", list: ["y"] }, "")
    refused(s, { list: [] }, "")
    refused(s, { a: "x" }, ".a")
    const exactlyOne = obj(
      { a: { type: "string" }, b: { type: "string" } },
      { oneOf: [{ required: ["a"] }, { required: ["b"] }] },
    )
    ok(exactlyOne, { a: "" })
    refused(exactlyOne, {}, "")
    refused(exactlyOne, { a: "", b: "" }, "")
  })
})

describe("unknown fields and nulls", () => {
  const s = obj({
    keep: obj({}, { "x-kubernetes-preserve-unknown-fields": true }),
    n: { type: "string", nullable: true },
    s: { type: "string" },
  })
  it("refuses fields the schema does not name (strict field validation), keeps preserved subtrees", () => {
    expect(issues(s, { x: 1 })).toEqual(['.x: unknown field "x"'])
    ok(s, { keep: { anything: { at: ["all"] } } })
  })
  it("prunes a null the field may not hold; keeps a nullable one; refuses a null list item", () => {
    const verdict = validateStructural(s, { s: null, n: null })
    expect(verdict.issues).toEqual([])
    expect(verdict.value).toEqual({ n: null })
    refused({ type: "array", items: { type: "string" } }, [null], "[0]")
    refused(obj({ s: { type: "string" } }, { required: ["s"] }), { s: null }, ".s")
  })
})

describe("structural schemas", () => {
  it("accepts a typed tree with value validations over declared fields", () => {
    expect(
      structuralProblems(
        obj({ a: { type: "string" }, b: { "x-kubernetes-int-or-string": true } }, { not: { required: ["a", "b"] } }),
      ),
    ).toEqual([])
  })
  it("refuses missing types, uniqueItems, $ref, types and undeclared fields in value validations, bad patterns", () => {
    expect(structuralProblems(obj({ a: {} }))).toEqual([".properties.a.type: must not be empty"])
    expect(structuralProblems({ type: "array", items: { type: "string" }, uniqueItems: true })).toEqual([
      ".uniqueItems: must not be true",
    ])
    expect(structuralProblems(obj({ a: { $ref: "#/x" } })).join()).toContain("references are not allowed")
    expect(structuralProblems(obj({ a: { type: "string" } }, { anyOf: [{ type: "object" }] }))).toEqual([
      ".anyOf[0].type: must not be set in a value validation",
    ])
    expect(
      structuralProblems(obj({ a: { type: "string" } }, { not: { required: ["a"], properties: { b: {} } } })),
    ).toEqual([".not[0].properties.b: not declared in the structural schema"])
    expect(structuralProblems({ type: "string", pattern: "^(?=a)" })).toHaveLength(1)
    expect(structuralProblems({ type: "integer", "x-kubernetes-int-or-string": true })).toHaveLength(1)
    expect(structuralProblems({ type: "array" })).toEqual([".items: must be set for an array"])
    const listMap = (required: Array<string>) => ({
      type: "array",
      items: obj({ name: { type: "string" } }, { required }),
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["name"],
    })
    expect(structuralProblems(listMap(["name"]))).toEqual([])
    expect(structuralProblems(listMap([]))).toEqual([
      ".x-kubernetes-list-map-keys: name must be required or have a default",
    ])
  })
  it("patternProblem: RE2 refuses look-around and back-references", () => {
    expect(patternProblem("^[a-z]+$")).toBeUndefined()
    expect(patternProblem("(a)\\1")).toBeDefined()
    expect(patternProblem("a(?!b)")).toBeDefined()
  })
})
