/**
 * A list answer read as it arrives: every item handed over parsed and in order, the rest of the
 * document kept, whatever the chunk boundaries (inside keys, strings, escapes, nested arrays),
 * and text that is not a complete JSON object refused.
 */
import { describe, expect, it } from "vitest"
import { makeListStream } from "../../../src/services/orchestrator/list-stream.js"

const read = (chunks: ReadonlyArray<string>, withoutManagedFields = false) => {
  const items: Array<unknown> = []
  const stream = makeListStream((item) => items.push(item), { withoutManagedFields })
  for (const c of chunks) stream.push(c)
  return { items, rest: stream.end() }
}

/** The text cut every `size` characters. */
const cut = (text: string, size: number) =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size))

const list = {
  kind: "PodList",
  apiVersion: "v1",
  metadata: { resourceVersion: "42", continue: 'tok"en]}' },
  items: [
    {
      metadata: { name: "a", labels: { items: '[{\\"x\\"}]', quote: 'say "hi" \\' } },
      spec: { containers: [{ name: "c", ports: [{ containerPort: 80 }] }], nested: [[1, [2]], {}] },
    },
    { metadata: { name: "b" }, status: { podIPs: [{ ip: "10.0.0.2" }] }, text: "ünïcødé ✓ {[" },
    { metadata: { name: "c" }, empty: {}, list: [] },
  ],
}

describe("list stream", () => {
  it("hands over every item and keeps the rest, at any chunk size", () => {
    const text = JSON.stringify(list)
    for (const size of [1, 2, 3, 7, 64, text.length]) {
      const { items, rest } = read(cut(text, size))
      expect(items).toEqual(list.items)
      expect(rest).toEqual({ ...list, items: [] })
    }
  })

  /** Items as the API server writes them: managedFields last in metadata, or first, or alone. */
  const managed = [
    { manager: "kubectl", fieldsV1: { "f:metadata": { "f:labels": { ".": {}, 'k:{"name":"x]"}': {} } } } },
  ]
  const managedList = {
    kind: "PodList",
    metadata: { resourceVersion: "7" },
    items: [
      { metadata: { name: "a", labels: { managedFields: "[" }, managedFields: managed }, spec: { managedFields: [1] } },
      { metadata: { managedFields: managed, name: "b" }, status: { phase: "Running" } },
      { metadata: { managedFields: [] } },
      { kind: "Pod", metadata: { name: 'd\\"', annotations: { note: '"managedFields":[' } }, managedFields: [2] },
      { metadata: { name: "e", managedFields: [{ a: "\\" }, { b: "}]" }] } },
    ],
  }
  const withoutMetadataManagedFields = managedList.items.map((item) => {
    const { managedFields: _, ...metadata } = item.metadata as Record<string, unknown>
    return { ...item, metadata }
  })

  it("leaves each item's metadata.managedFields out, and nothing else, at any chunk size", () => {
    const text = JSON.stringify(managedList)
    for (let size = 1; size <= 40; size++) {
      const { items, rest } = read(cut(text, size), true)
      // Keys cut by a chunk boundary are kept: the caller drops those after parsing.
      const dropped = items.map((item) => {
        const { managedFields: _, ...metadata } = (item as { metadata: Record<string, unknown> }).metadata
        return { ...(item as object), metadata }
      })
      expect(dropped).toEqual(withoutMetadataManagedFields)
      expect(rest).toEqual({ ...managedList, items: [] })
    }
    // Whole, every item's managedFields is cut from its text.
    const whole = read([text], true)
    expect(whole.items).toEqual(withoutMetadataManagedFields)
    // And without the option, nothing is left out.
    expect(read([text]).items).toEqual(managedList.items)
  })

  it("reads any JSON the same as JSON.parse, whatever the chunks (random documents)", () => {
    let seed = 7
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed / 2147483648
    }
    const pieces = ["\\", '"', "{", "}", "[", "]", ",", ":", "managedFields", "metadata", "a", "ü"]
    const string = () =>
      Array.from({ length: Math.floor(random() * 6) }, () => pieces[Math.floor(random() * pieces.length)]).join("")
    const value = (depth: number): unknown => {
      const pick = random()
      if (depth > 4 || pick < 0.3) return string()
      if (pick < 0.4) return Math.floor(random() * 100)
      if (pick < 0.7) return Array.from({ length: Math.floor(random() * 3) }, () => value(depth + 1))
      const keys = ["metadata", "managedFields", string(), string()]
      return Object.fromEntries(keys.slice(0, 1 + Math.floor(random() * 4)).map((k) => [k, value(depth + 1)]))
    }
    for (let n = 0; n < 200; n++) {
      const items = Array.from({ length: 1 + Math.floor(random() * 3) }, () => ({
        metadata: { name: string(), managedFields: [value(3)] },
        spec: value(2),
      }))
      const document = { metadata: { continue: string() }, items }
      const text = JSON.stringify(document)
      const size = 1 + Math.floor(random() * 20)
      const plain = read(cut(text, size))
      expect(plain.items).toEqual(items)
      const trimmed = read(cut(text, size), true)
      expect(
        trimmed.items.map((item) => {
          const { managedFields: _, ...metadata } = (item as { metadata: Record<string, unknown> }).metadata
          return { ...(item as object), metadata }
        }),
      ).toEqual(items.map((item) => ({ ...item, metadata: { name: item.metadata.name } })))
    }
  })

  it("reads pretty-printed text, items after other keys, and no items at all", () => {
    const pretty = JSON.stringify({ a: ["items"], items: list.items, z: { items: [1] } }, null, 2)
    for (const size of [5, 1000]) {
      const { items, rest } = read(cut(pretty, size))
      expect(items).toEqual(list.items)
      expect(rest).toEqual({ a: ["items"], items: [], z: { items: [1] } })
    }
    expect(read(['{"kind":"List","items":[]}'])).toEqual({ items: [], rest: { kind: "List", items: [] } })
    expect(read(['{"kind":"List","items":null}'])).toEqual({ items: [], rest: { kind: "List", items: null } })
  })

  it("refuses text that ends early or is not JSON", () => {
    expect(() => read(['{"items":[{"a":1}'])).toThrow(/ended early/)
    expect(() => read(['{"items":[{"a":1},{"b":}]}'])).toThrow(SyntaxError)
    expect(() => read(["not json"])).toThrow(SyntaxError)
    expect(() => read([""])).toThrow(SyntaxError)
  })
})
