/**
 * The sprig functions (github.com/Masterminds/sprig, which the reference adds to every injection
 * template) that injection templates use: strings (`quote squote trim trimAll trimPrefix
 * trimSuffix trunc replace upper lower title hasPrefix hasSuffix splitList join cat substr repeat
 * nindent b64enc b64dec toString`), defaults (`default empty coalesce ternary required fail`),
 * lists (`list append push prepend first last rest initial uniq has without compact concat
 * until sortAlpha`), dicts (`dict get set unset hasKey keys pick`), numbers (`int int64 float64 atoi add
 * sub mul div mod max min`), `toJson toPrettyJson fromJson kindIs typeOf`. Sprig's `indent`,
 * `contains`, `omit` and `env` are replaced by the reference's own (inject-functions.ts).
 * Functions that read the clock, randomness, the network, files or the process are left out, as
 * are regular expressions (a ConfigMap's pattern could take unbounded time).
 */
import { arity, fixed } from "./builtins.js"
import { TemplateError } from "./errors.js"
import type { FunctionContext, TemplateFunction } from "./exec.js"
import { formatValue, goKind, goTypeName, isEmpty, isMap, toInt, toStr, type Value } from "./go-values.js"
import { goQuote } from "./printf.js"

/** JSON with map keys sorted, as Go's encoding/json writes maps. */
export const goJson = (v: Value, indent?: string): string =>
  JSON.stringify(
    v,
    (_k, value: unknown) =>
      isMap(value)
        ? Object.fromEntries(
            Object.keys(value)
              .sort()
              .map((k) => [k, value[k]]),
          )
        : value,
    indent,
  ) ?? "null"

const listOf = (name: string, v: Value): ReadonlyArray<Value> => {
  if (v === undefined || v === null) return []
  if (Array.isArray(v)) return v
  throw new TemplateError(`cannot ${name} on type ${typeof v}`)
}

const mapOf = (name: string, v: Value): Record<string, unknown> => {
  if (isMap(v)) return v
  throw new TemplateError(`${name} needs a dict, got ${v === undefined || v === null ? "nil" : typeof v}`)
}

const str = (args: ReadonlyArray<Value>, i: number): string => toStr(args[i])

/** Sprig's indent: every line, the first included, gets `n` spaces. */
export const padLines = (n: number, s: string, ctx: FunctionContext): string => {
  ctx.checkSize(Math.max(0, n) * (s.split("\n").length + 1) + s.length, "indented text")
  const pad = " ".repeat(Math.max(0, n))
  return pad + s.replaceAll("\n", `\n${pad}`)
}

const numbers = (name: string, args: ReadonlyArray<Value>): ReadonlyArray<number> => {
  arity(name, args, 1, Number.POSITIVE_INFINITY)
  return args.map(toInt)
}

export const sprigFunctions: Readonly<Record<string, TemplateFunction>> = {
  // Strings.
  quote: (args) =>
    args
      .filter((a) => a !== undefined && a !== null)
      .map((a) => goQuote(toStr(a)))
      .join(" "),
  squote: (args) =>
    args
      .filter((a) => a !== undefined && a !== null)
      .map((a) => `'${toStr(a)}'`)
      .join(" "),
  trim: fixed("trim", 1, (args) => str(args, 0).trim()),
  trimAll: (args) => {
    arity("trimAll", args, 2)
    const cut = new Set(str(args, 0))
    const chars = [...str(args, 1)]
    let start = 0
    let end = chars.length
    while (start < end && cut.has(chars[start] as string)) start++
    while (end > start && cut.has(chars[end - 1] as string)) end--
    return chars.slice(start, end).join("")
  },
  trimPrefix: fixed("trimPrefix", 2, (args) =>
    str(args, 1).startsWith(str(args, 0)) ? str(args, 1).slice(str(args, 0).length) : str(args, 1),
  ),
  trimSuffix: (args) => {
    arity("trimSuffix", args, 2)
    const [suffix, s] = [str(args, 0), str(args, 1)]
    return suffix !== "" && s.endsWith(suffix) ? s.slice(0, -suffix.length) : s
  },
  trunc: (args) => {
    arity("trunc", args, 2)
    const n = toInt(args[0])
    const s = str(args, 1)
    return n >= 0 ? s.slice(0, n) : s.slice(Math.max(0, s.length + n))
  },
  replace: fixed("replace", 3, (args) => str(args, 2).replaceAll(str(args, 0), str(args, 1))),
  upper: fixed("upper", 1, (args) => str(args, 0).toUpperCase()),
  lower: fixed("lower", 1, (args) => str(args, 0).toLowerCase()),
  hasPrefix: fixed("hasPrefix", 2, (args) => str(args, 1).startsWith(str(args, 0))),
  hasSuffix: fixed("hasSuffix", 2, (args) => str(args, 1).endsWith(str(args, 0))),
  title: fixed("title", 1, (args) =>
    str(args, 0).replace(/(^|[^\p{L}\p{N}'])(\p{L})/gu, (_m, sep, c) => sep + c.toUpperCase()),
  ),
  sortAlpha: fixed("sortAlpha", 1, (args) =>
    (typeof args[0] === "string" ? [args[0]] : listOf("sortAlpha", args[0])).map((v) => toStr(v)).sort(),
  ),
  splitList: fixed("splitList", 2, (args) => str(args, 1).split(str(args, 0))),
  join: (args) => {
    arity("join", args, 2)
    const list = typeof args[1] === "string" ? [args[1]] : listOf("join", args[1])
    return list.map((v) => toStr(v)).join(str(args, 0))
  },
  cat: (args) =>
    args
      .filter((a) => a !== undefined && a !== null)
      .map((a) => formatValue(a))
      .join(" "),
  substr: (args) => {
    arity("substr", args, 3)
    const s = str(args, 2)
    const start = toInt(args[0])
    const end = toInt(args[1])
    return s.slice(Math.max(0, start), end < 0 ? s.length : end)
  },
  repeat: (args, ctx) => {
    arity("repeat", args, 2)
    const n = Math.max(0, toInt(args[0]))
    ctx.checkSize(n * str(args, 1).length, "repeated text")
    return str(args, 1).repeat(n)
  },
  nindent: fixed("nindent", 2, (args, ctx) => `\n${padLines(toInt(args[0]), str(args, 1), ctx)}`),
  b64enc: fixed("b64enc", 1, (args) => Buffer.from(str(args, 0), "utf8").toString("base64")),
  b64dec: fixed("b64dec", 1, (args) => Buffer.from(str(args, 0), "base64").toString("utf8")),
  toString: fixed("toString", 1, (args) => toStr(args[0])),
  // Defaults and flow.
  default: (args) => {
    arity("default", args, 1, 2)
    return args.length < 2 || isEmpty(args[1]) ? args[0] : args[1]
  },
  empty: fixed("empty", 1, (args) => isEmpty(args[0])),
  coalesce: (args) => args.find((a) => !isEmpty(a)),
  ternary: fixed("ternary", 3, (args) => (args[2] === true ? args[0] : args[1])),
  required: (args) => {
    arity("required", args, 2)
    if (args[1] === undefined || args[1] === null || args[1] === "") throw new TemplateError(str(args, 0))
    return args[1]
  },
  fail: (args) => {
    throw new TemplateError(str(args, 0))
  },
  // Lists.
  list: (args) => [...args],
  append: fixed("append", 2, (args) => [...listOf("append", args[0]), args[1]]),
  push: fixed("push", 2, (args) => [...listOf("push", args[0]), args[1]]),
  prepend: fixed("prepend", 2, (args) => [args[1], ...listOf("prepend", args[0])]),
  first: fixed("first", 1, (args) => listOf("first", args[0])[0]),
  last: (args) => {
    arity("last", args, 1)
    const l = listOf("last", args[0])
    return l[l.length - 1]
  },
  rest: fixed("rest", 1, (args) => listOf("rest", args[0]).slice(1)),
  initial: fixed("initial", 1, (args) => listOf("initial", args[0]).slice(0, -1)),
  uniq: (args) => {
    arity("uniq", args, 1)
    const out: Array<Value> = []
    for (const v of listOf("uniq", args[0])) if (!out.some((o) => goJson(o) === goJson(v))) out.push(v)
    return out
  },
  has: fixed("has", 2, (args) => listOf("has", args[1]).some((v) => goJson(v) === goJson(args[0]))),
  without: (args) => {
    arity("without", args, 1, Number.POSITIVE_INFINITY)
    const drop = args.slice(1).map((v) => goJson(v))
    return listOf("without", args[0]).filter((v) => !drop.includes(goJson(v)))
  },
  compact: fixed("compact", 1, (args) => listOf("compact", args[0]).filter((v) => !isEmpty(v))),
  concat: (args, ctx) => {
    const out = args.flatMap((a) => listOf("concat", a))
    ctx.checkSize(out.length, "list")
    return out
  },
  until: (args, ctx) => {
    arity("until", args, 1)
    const n = toInt(args[0])
    ctx.checkSize(Math.abs(n), "list")
    return Array.from({ length: Math.abs(n) }, (_, i) => (n < 0 ? -i : i))
  },
  // Dicts. `set` and `unset` change the dict they are given (sprig does); the template data
  // is the injector's own copy.
  dict: (args) => {
    const out: Record<string, unknown> = {}
    for (let i = 0; i < args.length; i += 2) out[toStr(args[i])] = i + 1 < args.length ? args[i + 1] : ""
    return out
  },
  get: (args) => {
    arity("get", args, 2)
    const m = mapOf("get", args[0])
    return Object.hasOwn(m, str(args, 1)) ? m[str(args, 1)] : ""
  },
  set: (args) => {
    arity("set", args, 3)
    const m = mapOf("set", args[0])
    m[str(args, 1)] = args[2]
    return m
  },
  unset: (args) => {
    arity("unset", args, 2)
    const m = mapOf("unset", args[0])
    delete m[str(args, 1)]
    return m
  },
  hasKey: fixed("hasKey", 2, (args) => Object.hasOwn(mapOf("hasKey", args[0]), str(args, 1))),
  keys: (args) => args.flatMap((m) => Object.keys(mapOf("keys", m))).sort(),
  pick: (args) => {
    arity("pick", args, 1, Number.POSITIVE_INFINITY)
    const m = mapOf("pick", args[0])
    const wanted = args.slice(1).map((k) => toStr(k))
    return Object.fromEntries(Object.entries(m).filter(([k]) => wanted.includes(k)))
  },
  // Numbers (sprig's are int64: fractions are cut).
  int: fixed("int", 1, (args) => toInt(args[0])),
  int64: fixed("int64", 1, (args) => toInt(args[0])),
  atoi: fixed("atoi", 1, (args) => toInt(str(args, 0))),
  float64: (args) => {
    arity("float64", args, 1)
    const n = Number(args[0])
    return Number.isNaN(n) ? 0 : n
  },
  add: (args) => numbers("add", args).reduce((a, b) => a + b, 0),
  sub: fixed("sub", 2, (args) => toInt(args[0]) - toInt(args[1])),
  mul: (args) => numbers("mul", args).reduce((a, b) => a * b, 1),
  div: (args) => {
    arity("div", args, 2)
    if (toInt(args[1]) === 0) throw new TemplateError("integer divide by zero")
    return Math.trunc(toInt(args[0]) / toInt(args[1]))
  },
  mod: (args) => {
    arity("mod", args, 2)
    if (toInt(args[1]) === 0) throw new TemplateError("integer divide by zero")
    return toInt(args[0]) % toInt(args[1])
  },
  max: (args) => Math.max(...numbers("max", args)),
  min: (args) => Math.min(...numbers("min", args)),
  // Encodings and types.
  toJson: fixed("toJson", 1, (args) => goJson(args[0])),
  toPrettyJson: fixed("toPrettyJson", 1, (args) => goJson(args[0], "  ")),
  fromJson: (args) => {
    arity("fromJson", args, 1)
    try {
      return JSON.parse(str(args, 0)) as Value
    } catch {
      return {}
    }
  },
  kindIs: fixed("kindIs", 2, (args) => goKind(args[1]) === str(args, 0)),
  typeOf: fixed("typeOf", 1, (args) => goTypeName(args[0])),
}
