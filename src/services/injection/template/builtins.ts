/**
 * Go text/template's own functions: `eq ne lt le gt ge not len index slice print printf println
 * html js urlquery` (`and`/`or` are evaluated lazily by exec.ts). Argument errors carry Go's
 * wording; exec.ts adds the template, line and function name.
 */
import { TemplateError } from "./errors.js"
import type { TemplateFunction } from "./exec.js"
import { equals, formatValue, isMap, less, truth, type Value } from "./go-values.js"
import { sprintf } from "./printf.js"

export const arity = (name: string, args: ReadonlyArray<Value>, min: number, max = min): void => {
  if (args.length < min || args.length > max) {
    const want = min === max ? `${min}` : max === Number.POSITIVE_INFINITY ? `at least ${min}` : `${min}..${max}`
    throw new TemplateError(`wrong number of args for ${name}: want ${want} got ${args.length}`)
  }
}

/** A function of exactly `count` arguments. */
export const fixed =
  (name: string, count: number, body: TemplateFunction): TemplateFunction =>
  (args, ctx) => {
    arity(name, args, count)
    return body(args, ctx)
  }

/** Go's fmt.Sprint: spaces only between operands when neither is a string. */
const sprint = (args: ReadonlyArray<Value>): string => {
  let out = ""
  args.forEach((a, i) => {
    if (i > 0 && typeof a !== "string" && typeof args[i - 1] !== "string") out += " "
    out += formatValue(a)
  })
  return out
}

const indexInto = (container: Value, key: Value): Value => {
  if (container === undefined || container === null || container === "") return undefined
  if (Array.isArray(container)) {
    if (typeof key !== "number" || !Number.isInteger(key))
      throw new TemplateError("cannot index slice with non-integer")
    if (key < 0 || key >= container.length) throw new TemplateError(`index out of range: ${key}`)
    return container[key]
  }
  if (isMap(container)) return Object.hasOwn(container, String(key)) ? container[String(key)] : undefined
  if (typeof container === "string") {
    if (typeof key !== "number" || key < 0 || key >= container.length)
      throw new TemplateError(`index out of range: ${String(key)}`)
    return container.charCodeAt(key)
  }
  throw new TemplateError(`can't index item of type ${typeof container}`)
}

const lengthOf = (v: Value): number => {
  if (v === undefined || v === null) return 0
  if (typeof v === "string" || Array.isArray(v)) return v.length
  if (isMap(v)) return Object.keys(v).length
  throw new TemplateError(`len of type ${typeof v}`)
}

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  "<": "&lt;",
  ">": "&gt;",
  "&": "&amp;",
  "'": "&#39;",
  '"': "&#34;",
  "\0": "\uFFFD",
}

const JS_ESCAPES: Readonly<Record<string, string>> = {
  "\\": "\\\\",
  "'": "\\'",
  '"': '\\"',
  "<": "\\u003C",
  ">": "\\u003E",
  "&": "\\u0026",
  "=": "\\u003D",
  "\n": "\\u000A",
  "\r": "\\u000D",
  "\t": "\\u0009",
}

const compare =
  (name: string, test: (a: Value, b: Value) => boolean): TemplateFunction =>
  (args) => {
    arity(name, args, 2)
    return test(args[0], args[1])
  }

export const builtinFunctions: Readonly<Record<string, TemplateFunction>> = {
  eq: (args) => {
    arity("eq", args, 2, Number.POSITIVE_INFINITY)
    return args.slice(1).some((b) => equals(args[0], b))
  },
  ne: compare("ne", (a, b) => !equals(a, b)),
  lt: compare("lt", less),
  le: compare("le", (a, b) => less(a, b) || equals(a, b)),
  gt: compare("gt", (a, b) => !less(a, b) && !equals(a, b)),
  ge: compare("ge", (a, b) => !less(a, b)),
  not: (args) => {
    arity("not", args, 1)
    return !truth(args[0])
  },
  len: (args) => {
    arity("len", args, 1)
    return lengthOf(args[0])
  },
  index: (args) => {
    arity("index", args, 1, Number.POSITIVE_INFINITY)
    return args.slice(1).reduce((acc: Value, key) => indexInto(acc, key), args[0])
  },
  // Sprig's slice (it replaces Go's): lists only.
  slice: (args) => {
    arity("slice", args, 1, 4)
    const [item, from, to] = args
    if (!Array.isArray(item)) throw new TemplateError(`list should be type of slice or array but ${typeof item}`)
    const start = typeof from === "number" ? from : 0
    const end = typeof to === "number" ? to : item.length
    if (start < 0 || end > item.length || start > end)
      throw new TemplateError(`slice indexes out of range: ${start}:${end}`)
    return item.slice(start, end)
  },
  print: (args) => sprint(args),
  println: (args) => `${args.map((a) => formatValue(a)).join(" ")}\n`,
  printf: (args) => {
    arity("printf", args, 1, Number.POSITIVE_INFINITY)
    if (typeof args[0] !== "string") throw new TemplateError("printf's format must be a string")
    return sprintf(args[0], args.slice(1))
  },
  html: (args) => sprint(args).replace(/[<>&'"\0]/g, (c) => HTML_ESCAPES[c] ?? c),
  js: (args) => sprint(args).replace(/[\\'"<>&=\n\r\t]/g, (c) => JS_ESCAPES[c] ?? c),
  urlquery: (args) => encodeURIComponent(sprint(args)).replace(/%20/g, "+"),
}
