/**
 * The line of a field inside one YAML document, found only for the documents that have messages
 * (parsing with positions costs more than the plain read every document gets).
 */
import { isMap, isSeq, LineCounter, parseDocument } from "yaml"
import type { FieldPath } from "./snapshot.js"

/** 1-based line (within `text`) of the deepest node of `path` that exists; undefined if none. */
export const fieldLine = (text: string, path: FieldPath): number | undefined => {
  const counter = new LineCounter()
  let document: ReturnType<typeof parseDocument>
  try {
    document = parseDocument(text, { lineCounter: counter, keepSourceTokens: false })
  } catch {
    return undefined
  }
  let node: unknown = document.contents
  let offset: number | undefined
  for (const step of path) {
    if (isMap(node)) {
      const pair = node.items.find((item) => {
        const key = item.key as { value?: unknown } | null
        return key !== null && typeof key === "object" && String(key.value) === String(step)
      })
      if (pair === undefined) break
      const key = pair.key as { range?: [number, number, number] }
      offset = key.range?.[0] ?? offset
      node = pair.value
    } else if (isSeq(node) && typeof step === "number") {
      const item = node.items[step] as { range?: [number, number, number] } | undefined
      if (item === undefined) break
      offset = item.range?.[0] ?? offset
      node = item
    } else break
  }
  return offset === undefined ? undefined : counter.linePos(offset).line
}

/** `spec.http[0].route` for display. */
export const renderFieldPath = (path: FieldPath): string =>
  path.reduce<string>(
    (out, step) =>
      typeof step === "number"
        ? `${out}[${step}]`
        : out === ""
          ? step
          : /^[\w-]+$/.test(step)
            ? `${out}.${step}`
            : `${out}[${JSON.stringify(step)}]`,
    "",
  )

/** `spec.http[0].route` → `["spec", "http", 0, "route"]` (the config model's issue paths). */
export const parseFieldPath = (path: string): FieldPath =>
  path
    .split(/[.[\]]/)
    .filter((step) => step !== "")
    .map((step) => (/^\d+$/.test(step) ? Number(step) : step.replace(/^"|"$/g, "")))
