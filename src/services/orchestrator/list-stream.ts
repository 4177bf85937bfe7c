/**
 * Reads a list answer (`{"kind":…,"metadata":{…},"items":[{…},{…}]}`) as its text arrives:
 * each element of the top-level `items` array is parsed on its own as soon as it is complete and
 * handed over, and the rest of the document (without the items) is parsed at the end. A list of
 * 10,000 pods (~30 MB, all at once from the API server's watch cache) is then never held as one
 * text, and each object can be trimmed (managedFields) while the next is still arriving.
 *
 * A scanner over JSON text: it tracks strings (with escapes) and nesting depth only; the pieces
 * it cuts are checked by JSON.parse. Text that is not a JSON object fails in `end`. Inside a
 * string it jumps from quote to quote (most of a pod is strings) instead of visiting every
 * character.
 *
 * With `withoutManagedFields`, an item's `"metadata":{…,"managedFields":[…]}` is cut out of its
 * text before it is parsed: a third of a Pod's JSON, and most of the cost of parsing it (many
 * small objects under keys like `f:metadata`). Only the compact form the API server writes is
 * cut; anything else is parsed whole and the caller drops the field as before.
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

export interface ListStreamOptions {
  /** Cut each item's `metadata.managedFields` out of its text before it is parsed. */
  readonly withoutManagedFields?: boolean
}

const METADATA_KEY = '"metadata":'
const MANAGED_FIELDS_KEY = '"managedFields":['

/** `onItem` receives every element of the top-level `items` array, parsed, in order. */
export const makeListStream = (onItem: (item: unknown) => void, options: ListStreamOptions = {}): ListStream => {
  const cutManagedFields = options.withoutManagedFields === true
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
  /** Where the current item's text goes on in this chunk (-1: not copying). */
  let itemStart = -1
  /** The item's last key (depth 3) was `metadata`: its object is where managedFields are. */
  let afterMetadataKey = false
  /** Inside an item's managedFields value, which is left out of its text. */
  let skipping = false

  const push = (chunk: string) => {
    let copyFrom = 0
    let i = 0
    const length = chunk.length
    while (i < length) {
      if (inString) {
        // Most of the text is inside strings: jump to the next quote (native indexOf) and look
        // back at the backslashes before it, instead of visiting every character.
        if (escaped) {
          escaped = false
          i++
          continue
        }
        const quote = chunk.indexOf('"', i)
        if (quote < 0) {
          // The string goes on in the next chunk; an odd run of backslashes at the end escapes
          // its first character.
          let k = length - 1
          while (k >= i && chunk.charCodeAt(k) === BACKSLASH) k--
          escaped = (length - 1 - k) % 2 === 1
          i = length
          break
        }
        let k = quote - 1
        while (k >= i && chunk.charCodeAt(k) === BACKSLASH) k--
        i = quote + 1
        // An escaped quote (an odd run of backslashes before it) does not end the string.
        if ((quote - 1 - k) % 2 === 1) continue
        inString = false
        if (keyStart >= 0) {
          keyText += chunk.slice(keyStart, quote)
          key = keyText
          keyStart = -1
        }
        continue
      }
      const c = chunk.charCodeAt(i)
      if (c === QUOTE) {
        inString = true
        // A string directly inside the top-level object: a key or a value; `key` keeps the last.
        if (depth === 1 && !inItems) {
          keyStart = i + 1
          keyText = ""
        } else if (cutManagedFields && inItems && !skipping) {
          // A key that starts in one chunk and ends in the next is not recognised: that item is
          // parsed whole (rare, and only slower).
          if (depth === 3) afterMetadataKey = chunk.startsWith(METADATA_KEY, i)
          else if (depth === 4 && afterMetadataKey && chunk.startsWith(MANAGED_FIELDS_KEY, i)) {
            item += chunk.slice(itemStart, i)
            itemStart = -1
            skipping = true
            // On past the `[`: the value's depth is counted as usual, strings included.
            depth++
            i += MANAGED_FIELDS_KEY.length
            inString = false
            continue
          }
        }
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        depth++
        if (c === OPEN_BRACKET && depth === 2 && key === "items" && !inItems) {
          inItems = true
          // The skeleton keeps `[`; the items are left out.
          skeleton += chunk.slice(copyFrom, i + 1)
          copyFrom = -1
        } else if (inItems && depth === 3 && c === OPEN_BRACE) {
          itemStart = i
          afterMetadataKey = false
        }
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (skipping && depth === 5 && c === CLOSE_BRACKET) {
          // The end of managedFields: the item goes on after it, and after its comma; as the
          // last key of metadata (where the API server writes it), the comma before it goes.
          skipping = false
          if (i + 1 < length && chunk.charCodeAt(i + 1) === 44) {
            itemStart = i + 2
            depth--
            i += 2
            continue
          }
          if (item.endsWith(",")) item = item.slice(0, -1)
          itemStart = i + 1
        } else if (inItems && depth === 3 && c === CLOSE_BRACE) {
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
      i++
    }
    // What is left of this chunk: an unfinished key, item or skeleton text.
    if (keyStart >= 0) {
      keyText += chunk.slice(keyStart)
      keyStart = 0
    }
    if (inItems) {
      // An item that goes on in the next chunk goes on from its start (unless inside the part
      // that is left out).
      if (depth >= 3 && itemStart >= 0) item += chunk.slice(itemStart)
      itemStart = depth >= 3 && !skipping ? 0 : -1
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
