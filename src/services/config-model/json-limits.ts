/**
 * The nesting bound of yaml-limits.ts (MAX_NESTING_DEPTH) for JSON: a request body checked as
 * text before `JSON.parse` builds it, and a value already parsed (an object the orchestrator
 * sent) checked before the validators, which recurse, walk it. Both are loops, not recursion:
 * a body of a million `[` is refused in one pass, without a stack to overflow.
 */

/**
 * The depth of the deepest array or object of a JSON text (1 for `[]`) when it is over `limit`,
 * else `undefined`. One pass over the characters; strings are skipped with their escapes. The
 * text need not be valid JSON: `JSON.parse` reports what else is wrong.
 */
export const jsonTextDepthOver = (text: string, limit: number): number | undefined => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c /* \ */) i++
      else if (c === 0x22 /* " */) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > limit) return depth
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth = Math.max(0, depth - 1)
  }
  return undefined
}

/**
 * Whether a JS value nests arrays and objects deeper than `limit` (a scalar inside N of them is at
 * depth N). Walks with an explicit stack and stops at the first path over the limit.
 */
export const valueDepthOver = (value: unknown, limit: number): boolean => {
  const stack: Array<{ readonly value: unknown; readonly depth: number }> = [{ value, depth: 0 }]
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    if (typeof top.value !== "object" || top.value === null) continue
    const depth = top.depth + 1
    if (depth > limit) return true
    for (const child of Array.isArray(top.value) ? top.value : Object.values(top.value)) {
      if (typeof child === "object" && child !== null) stack.push({ value: child, depth })
    }
  }
  return false
}
