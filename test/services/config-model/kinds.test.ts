/**
 * Table-driven checks of every kind: valid documents are accepted, and each validation rule
 * rejects with its message at its field path.
 */
import { describe, expect, it } from "vitest"
import { allKinds, lookupKind, normaliseGroup } from "../../../src/services/config-model/kinds.js"
import { doc, problems } from "./helpers.js"
import { TABLES } from "./kind-tables.js"

describe("every mesh kind has a table", () => {
  it("covers all registered mesh kinds", () => {
    const meshKinds = allKinds()
      .filter((k) => k.group.endsWith(".mesh.io"))
      .map((k) => k.kind)
    expect(Object.keys(TABLES).sort()).toEqual([...meshKinds].sort())
  })
})

describe.each(Object.entries(TABLES))("%s", (kind, table) => {
  it.each(table.valid.map((spec, i) => [i, spec] as const))("accepts valid example %i", (_, spec) => {
    expect(problems(doc(kind, spec, table.name !== undefined ? { name: table.name } : {}))).toEqual([])
  })

  it.each(table.invalid)("rejects: %s", (_, spec, expected) => {
    expect(problems(doc(kind, spec, table.name !== undefined ? { name: table.name } : {}))).toEqual(expected)
  })
})

describe("Gateway names", () => {
  it("must be RFC 1123 labels", () => {
    const spec = { servers: [{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["a.com"] }] }
    expect(problems(doc("Gateway", spec, { name: "my.gateway" }))).toEqual([
      'metadata.name: invalid gateway name: "my.gateway"',
    ])
  })
})

describe("kind registry", () => {
  it("maps upstream groups to mesh groups", () => {
    expect(normaliseGroup("networking.istio.io")).toBe("networking.mesh.io")
    expect(normaliseGroup("security.istio.io")).toBe("security.mesh.io")
    expect(normaliseGroup("telemetry.istio.io")).toBe("telemetry.mesh.io")
    expect(normaliseGroup("extensions.istio.io")).toBe("extensions.mesh.io")
    expect(lookupKind("networking.istio.io", "VirtualService")?.plural).toBe("virtualservices")
    expect(lookupKind("", "Namespace")?.namespaced).toBe(false)
  })
})
