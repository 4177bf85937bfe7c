/**
 * Tokens of the reference's template language (Go text/template): text between actions, and the
 * words inside `{{ }}`. Trim markers (`{{- ` and ` -}}`, the dash touching the delimiter and a
 * space on its other side) remove the white space on that side of the action; comments
 * (`{{/* … *\/}}`) produce nothing. Every token carries its line for error messages.
 */
import { TemplateError } from "./errors.js"

export type TokenKind =
  | "text"
  | "open"
  | "close"
  | "ident"
  | "keyword"
  | "field"
  | "variable"
  | "dot"
  | "string"
  | "number"
  | "char"
  | "bool"
  | "nil"
  | "declare"
  | "assign"
  | "pipe"
  | "lparen"
  | "rparen"
  | "comma"

export interface Token {
  readonly kind: TokenKind
  /** The token's value: text, a name (without `.`/`$` for fields), a decoded string literal. */
  readonly value: string
  readonly line: number
  /** No white space before it: `$x.Field` and `(…).Field` chain, `$x .Field` are two arguments. */
  readonly joined?: boolean
}

const KEYWORDS = new Set(["if", "else", "end", "range", "with", "define", "template", "block", "break", "continue"])

const isSpace = (c: string | undefined): boolean => c === " " || c === "\t" || c === "\r" || c === "\n"
const isAlnum = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9_]/.test(c)

const ESCAPES: Readonly<Record<string, string>> = {
  n: "\n",
  t: "\t",
  r: "\r",
  '"': '"',
  "'": "'",
  "\\": "\\",
  a: "\x07",
  b: "\b",
  f: "\f",
  v: "\v",
  "0": "\0",
}

/** Decodes a Go interpreted string or char literal's body (escapes as Go's strconv.Unquote reads them). */
const decodeEscapes = (body: string, fail: (m: string) => never): string => {
  let out = ""
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string
    if (c !== "\\") {
      out += c
      continue
    }
    const e = body[++i]
    if (e === undefined) fail("unterminated escape")
    if (e === "x" || e === "u" || e === "U") {
      const size = e === "x" ? 2 : e === "u" ? 4 : 8
      const hex = body.slice(i + 1, i + 1 + size)
      if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== size) fail(`invalid escape \\${e}${hex}`)
      out += String.fromCodePoint(Number.parseInt(hex, 16))
      i += size
    } else {
      const decoded = ESCAPES[e as string]
      if (decoded === undefined) fail(`unknown escape sequence \\${e}`)
      out += decoded
    }
  }
  return out
}

/** Splits a template into tokens; a Left-free design: malformed input throws TemplateError naming the line. */
export const lex = (name: string, text: string): ReadonlyArray<Token> => {
  const tokens: Array<Token> = []
  let line = 1
  let pos = 0
  const fail = (message: string): never => {
    throw new TemplateError(`template: ${name}:${line}: ${message}`)
  }
  const countLines = (s: string) => {
    for (const c of s) if (c === "\n") line++
  }
  let trimNextText = false
  while (pos < text.length) {
    const open = text.indexOf("{{", pos)
    let chunk = open < 0 ? text.slice(pos) : text.slice(pos, open)
    const trimLeft = open >= 0 && text[open + 2] === "-" && isSpace(text[open + 3])
    const chunkStartLine = line
    countLines(chunk)
    if (trimNextText) chunk = chunk.replace(/^[ \t\r\n]+/, "")
    if (trimLeft) chunk = chunk.replace(/[ \t\r\n]+$/, "")
    if (chunk !== "") tokens.push({ kind: "text", value: chunk, line: chunkStartLine })
    trimNextText = false
    if (open < 0) break
    pos = open + 2 + (trimLeft ? 2 : 0)
    // A comment is the whole action: `{{/* ... */}}`, trim markers allowed around it.
    if (text.startsWith("/*", pos)) {
      const end = text.indexOf("*/", pos + 2)
      if (end < 0) fail("unclosed comment")
      countLines(text.slice(pos, end))
      let after = end + 2
      if (text.startsWith(" -}}", after)) {
        trimNextText = true
        after += 4
      } else if (text.startsWith("}}", after)) after += 2
      else fail("comment ends before closing delimiter")
      pos = after
      continue
    }
    tokens.push({ kind: "open", value: "{{", line })
    let parenDepth = 0
    let spaced = true
    const push = (token: Token) => {
      tokens.push(spaced ? token : { ...token, joined: true })
      spaced = false
    }
    for (;;) {
      const c = text[pos]
      if (c === undefined) fail("unclosed action")
      if (isSpace(c)) {
        // ` -}}`: trim marker then close.
        if (text[pos + 1] === "-" && text.startsWith("}}", pos + 2)) {
          countLines(c as string)
          push({ kind: "close", value: "}}", line })
          pos += 4
          trimNextText = true
          break
        }
        // Newlines inside actions are plain white space (Go 1.16+).
        countLines(c as string)
        pos++
        spaced = true
        continue
      }
      if (text.startsWith("}}", pos)) {
        if (parenDepth > 0) fail("unclosed left paren")
        push({ kind: "close", value: "}}", line })
        pos += 2
        break
      }
      if (c === "(") {
        parenDepth++
        push({ kind: "lparen", value: c, line })
        pos++
      } else if (c === ")") {
        parenDepth--
        if (parenDepth < 0) fail("unexpected right paren")
        push({ kind: "rparen", value: c, line })
        pos++
      } else if (c === "|") {
        push({ kind: "pipe", value: c, line })
        pos++
      } else if (c === ",") {
        push({ kind: "comma", value: c, line })
        pos++
      } else if (c === ":" && text[pos + 1] === "=") {
        push({ kind: "declare", value: ":=", line })
        pos += 2
      } else if (c === "=") {
        push({ kind: "assign", value: "=", line })
        pos++
      } else if (c === '"') {
        let end = pos + 1
        while (end < text.length && text[end] !== '"') {
          if (text[end] === "\\") end++
          if (text[end] === "\n") fail("unterminated quoted string")
          end++
        }
        if (end >= text.length) fail("unterminated quoted string")
        push({ kind: "string", value: decodeEscapes(text.slice(pos + 1, end), fail), line })
        pos = end + 1
      } else if (c === "`") {
        const end = text.indexOf("`", pos + 1)
        if (end < 0) fail("unterminated raw quoted string")
        const raw = text.slice(pos + 1, end)
        push({ kind: "string", value: raw, line })
        countLines(raw)
        pos = end + 1
      } else if (c === "'") {
        let end = pos + 1
        while (end < text.length && text[end] !== "'") {
          if (text[end] === "\\") end++
          end++
        }
        if (end >= text.length) fail("unterminated character constant")
        const decoded = decodeEscapes(text.slice(pos + 1, end), fail)
        if ([...decoded].length !== 1) fail(`malformed character constant: ${text.slice(pos, end + 1)}`)
        push({ kind: "char", value: String(decoded.codePointAt(0)), line })
        pos = end + 1
      } else if (c === "$") {
        let end = pos + 1
        while (isAlnum(text[end])) end++
        push({ kind: "variable", value: text.slice(pos, end), line })
        pos = end
      } else if (c === ".") {
        if (/[0-9]/.test(text[pos + 1] ?? "")) {
          const m = /^\.[0-9][0-9_]*([eE][+-]?[0-9]+)?/.exec(text.slice(pos)) as RegExpExecArray
          push({ kind: "number", value: m[0], line })
          pos += m[0].length
        } else if (isAlnum(text[pos + 1])) {
          let end = pos + 1
          while (isAlnum(text[end])) end++
          push({ kind: "field", value: text.slice(pos + 1, end), line })
          pos = end
        } else {
          push({ kind: "dot", value: ".", line })
          pos++
        }
      } else if (/[0-9+-]/.test(c as string)) {
        const m = /^[+-]?(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|[0-9][0-9_]*(\.[0-9_]*)?([eE][+-]?[0-9]+)?)/.exec(
          text.slice(pos),
        )
        if (m === null || isAlnum(text[pos + m[0].length])) fail(`bad number syntax: ${text.slice(pos, pos + 10)}`)
        const value = (m as RegExpExecArray)[0]
        push({ kind: "number", value, line })
        pos += value.length
      } else if (isAlnum(c)) {
        let end = pos
        while (isAlnum(text[end])) end++
        const word = text.slice(pos, end)
        const kind: TokenKind = KEYWORDS.has(word)
          ? "keyword"
          : word === "true" || word === "false"
            ? "bool"
            : word === "nil"
              ? "nil"
              : "ident"
        push({ kind, value: word, line })
        pos = end
      } else {
        fail(`unexpected ${JSON.stringify(c)} in command`)
      }
    }
  }
  return tokens
}
