/**
 * Shell-style globs as bug-report uses them on names and log lines: `*` any run of characters,
 * `?` one character, everything else literal. Compiled once per pattern.
 */

const compiled = new Map<string, RegExp>()

const toRegExp = (pattern: string, anchored: boolean): RegExp => {
  const key = `${anchored ? "^" : "~"}${pattern}`
  const cached = compiled.get(key)
  if (cached !== undefined) return cached
  const body = pattern
    .split("")
    .map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
    .join("")
  const re = new RegExp(anchored ? `^${body}$` : body, "s")
  compiled.set(key, re)
  return re
}

/** Whether `text` is exactly `pattern` or matches it as a glob. */
export const globMatch = (pattern: string, text: string): boolean =>
  pattern === text || (/[*?]/.test(pattern) && toRegExp(pattern, true).test(text))

/** Whether `text` contains a match of `pattern` (a log line "matching" an error glob). */
export const globFind = (pattern: string, text: string): boolean =>
  /[*?]/.test(pattern) ? toRegExp(pattern, false).test(text) : text.includes(pattern)
