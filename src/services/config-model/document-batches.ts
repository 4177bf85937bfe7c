/**
 * Splits a multi-document YAML text into batches of whole documents, so that a large file can be
 * parsed a batch at a time (the file store yields to the event loop between batches).
 *
 * A batch boundary is a line starting with `---` followed by a space, a tab or the end of the
 * line: YAML forbids such a line inside any scalar (it always starts a document), so parsing the
 * batches one after the other gives the documents, in order, that parsing the whole text gives.
 * A text with directives (`%YAML`, `%TAG`) is not split: a directive belongs to the document
 * after it.
 */

/** Target size of one batch (characters); a single larger document is a batch of its own. */
export const DOCUMENT_BATCH_CHARS = 16 * 1024

export interface DocumentBatch {
  readonly text: string
  /** Lines of the text before this batch (to report lines of the whole file). */
  readonly lineOffset: number
}

const DOCUMENT_START = /^---(?=[ \t\r\n]|$)/gm
const DIRECTIVE = /^%/m

const countLines = (text: string, from: number, to: number): number => {
  let lines = 0
  for (let i = text.indexOf("\n", from); i >= 0 && i < to; i = text.indexOf("\n", i + 1)) lines++
  return lines
}

/** The batches of `text` (one batch when it is small, has one document or has directives). */
export const documentBatches = (text: string, target: number = DOCUMENT_BATCH_CHARS): ReadonlyArray<DocumentBatch> => {
  if (text.length <= target || DIRECTIVE.test(text)) return [{ text, lineOffset: 0 }]
  const batches: Array<DocumentBatch> = []
  let start = 0
  let lineOffset = 0
  DOCUMENT_START.lastIndex = 0
  for (let match = DOCUMENT_START.exec(text); match !== null; match = DOCUMENT_START.exec(text)) {
    // `^` also matches after U+2028/U+2029, which are not line breaks in YAML.
    const before = text[match.index - 1]
    if (before !== "\n" && before !== "\r") continue
    if (match.index - start < target) continue
    batches.push({ text: text.slice(start, match.index), lineOffset })
    lineOffset += countLines(text, start, match.index)
    start = match.index
  }
  batches.push({ text: text.slice(start), lineOffset })
  return batches
}
