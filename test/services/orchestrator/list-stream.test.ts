/**
 * A list answer read as it arrives: every item handed over parsed and in order, the rest of the
 * document kept, whatever the chunk boundaries (inside keys, strings, escapes, nested arrays),
 * and text that is not a complete JSON object refused.
 */
import { describe, expect, it } from "vitest"
import { makeListStream } from "../../../src/services/orchestrator/list-stream.js"

const read = (chunks: ReadonlyArray<string>) => {
  const items: Array<unknown> = []
  const stream = makeListStream((item) => items.push(item))
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
