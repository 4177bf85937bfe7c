/** MESH_BOOTSTRAP_OVERRIDE: parsing (JSON/YAML, one mapping) and the deep merge rule. */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { deepMerge, parseOverride } from "../../../../src/services/agent/bootstrap/override.js"

describe("deepMerge", () => {
  it("merges objects recursively; lists and scalars replace", () => {
    const base = { a: { b: 1, c: [1, 2], d: { e: "x" } }, f: "keep", g: [{ n: 1 }] }
    const over = { a: { b: 2, c: [3], d: { g: true } }, g: [{ m: 2 }], h: null }
    expect(deepMerge(base, over)).toEqual({
      a: { b: 2, c: [3], d: { e: "x", g: true } },
      f: "keep",
      g: [{ m: 2 }],
      h: null,
    })
    expect(base.a.b).toBe(1)
  })

  it("an object over a scalar (or the reverse) replaces", () => {
    expect(deepMerge({ a: 1 }, { a: { b: 1 } })).toEqual({ a: { b: 1 } })
    expect(deepMerge({ a: { b: 1 } }, { a: "s" })).toEqual({ a: "s" })
  })
})

describe("parseOverride", () => {
  it("reads JSON and YAML mappings", () => {
    expect(parseOverride("o.json", '{"admin": {"address": 1}}')).toEqual(Either.right({ admin: { address: 1 } }))
    expect(parseOverride("o.yaml", "admin:\n  address: 1\n")).toEqual(Either.right({ admin: { address: 1 } }))
  })

  it("bad syntax is an error naming the variable, file and line", () => {
    const out = parseOverride("o.json", '{\n  "a": [1,\n')
    expect(Either.isLeft(out) && out.left).toMatch(/^MESH_BOOTSTRAP_OVERRIDE o\.json: syntax error at line \d+/)
  })

  it("anything but one mapping is an error", () => {
    for (const text of ["[1, 2]", "42", ""]) {
      expect(parseOverride("o.json", text)).toEqual(
        Either.left("MESH_BOOTSTRAP_OVERRIDE o.json: must hold one JSON/YAML object (mapping)"),
      )
    }
  })
})
