/**
 * Reads a list answer (`{"kind":…,"metadata":{…},"items":[{…},{…}]}`) as its text arrives:
 * each element of the top-level `items` array is parsed on its own as soon as it is complete and
 * handed over, and the rest of the document (without the items) is parsed at the end. A list of
 * 10,000 pods (~30 MB, all at once from the API server's watch cache) is then never held as one
 * text, and each object can be trimmed (managedFields) while the next is still arriving.
 *
 * A scanner over JSON text: it tracks strings (with escapes) and nesting depth only; the pieces
 * it cuts are checked by JSON.parse. Text that is not a JSON object fails in `end`.
 */

const QUOTE = 34
const BACKSLASH = 92
const OPEN_BRACE = 123
const CLOSE_BRACE = 125
const OPEN_BRACKET = 91
const CLOSE_BRACKET = 93

export interface ListStream {
  /** The next piece of the answer's text. */
  readonly push: (chunk: string) => void
  /** The document without its items (`items: []`); throws when the text is not JSON. */
  readonly end: () => unknown
}

/** `onItem` receives every element of the top-level `items` array, parsed, in order. */
export const makeListStream = (onItem: (item: unknown) => void): ListStream => {
  // The document's text outside the items array.
  let skeleton = ""
  // The pieces of the item being read (an item may span chunks).
  let item = ""
  let depth = 0
  let inString = false
  let escaped = false
  // The last top-level key seen (depth 1), to find `items`.
  let key = ""
  let keyStart = -1
  let keyText = ""
  /** Inside the top-level items array (depth 2). */
  let inItems = false
  let itemStart = -1

  const push = (chunk: string) => {
    let copyFrom = 0
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i)
      if (inString) {
        if (escaped) escaped = false
        else if (c === BACKSLASH) escaped = true
        else if (c === QUOTE) {
          inString = false
          if (keyStart >= 0) {
            keyText += chunk.slice(keyStart, i)
            key = keyText
            keyStart = -1
          }
        }
        continue
      }
      if (c === QUOTE) {
        inString = true
        // A string directly inside the top-level object: a key or a value; `key` keeps the last.
        if (depth === 1 && !inItems) {
          keyStart = i + 1
          keyText = ""
        }
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        depth++
        if (c === OPEN_BRACKET && depth === 2 && key === "items" && !inItems) {
          inItems = true
          // The skeleton keeps `[`; the items are left out.
          skeleton += chunk.slice(copyFrom, i + 1)
          copyFrom = -1
        } else if (inItems && depth === 3 && c === OPEN_BRACE) itemStart = i
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (inItems && depth === 3 && c === CLOSE_BRACE) {
          item += chunk.slice(itemStart, i + 1)
          itemStart = -1
          const text = item
          item = ""
          onItem(JSON.parse(text))
        } else if (inItems && depth === 2 && c === CLOSE_BRACKET) {
          inItems = false
          copyFrom = i
        }
        depth--
      }
    }
    // What is left of this chunk: an unfinished key, item or skeleton text.
    if (keyStart >= 0) {
      keyText += chunk.slice(keyStart)
      keyStart = 0
    }
    if (inItems) {
      // An item that goes on in the next chunk goes on from its start.
      if (depth >= 3) item += chunk.slice(itemStart)
      itemStart = depth >= 3 ? 0 : -1
    } else if (copyFrom >= 0) skeleton += chunk.slice(copyFrom)
  }

  return {
    push,
    end: () => {
      if (inItems || depth !== 0 || inString) throw new SyntaxError("the list answer ended early")
      return JSON.parse(skeleton)
    },
  }
}
