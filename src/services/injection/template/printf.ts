/**
 * Go's fmt.Sprintf for the verbs templates use: `%v %s %d %q %t %f %g %e %x %X %o %b %c %%`,
 * with flags (`-+ 0#`), width and precision (`*` included). A verb with a missing argument writes
 * `%!v(MISSING)` and extra arguments `%!(EXTRA …)`, as Go does.
 */
import { formatNumber, formatValue, goTypeName, isMap, type Value } from "./go-values.js"

/** Go's strconv.Quote for the printable characters templates meet (JSON's escaping is the same for ASCII). */
export const goQuote = (s: string): string =>
  JSON.stringify(s).replace(
    /[\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  )

const pad = (s: string, width: number | undefined, left: boolean, zero: boolean): string => {
  if (width === undefined || s.length >= width) return s
  if (left) return s.padEnd(width, " ")
  if (zero) {
    const sign = /^[+-]/.test(s) ? (s[0] as string) : ""
    return sign + s.slice(sign.length).padStart(width - sign.length, "0")
  }
  return s.padStart(width, " ")
}

const integer = (v: Value): number | undefined =>
  typeof v === "number" ? Math.trunc(v) : typeof v === "boolean" ? undefined : undefined

export const sprintf = (format: string, args: ReadonlyArray<Value>): string => {
  let out = ""
  let argIndex = 0
  for (let i = 0; i < format.length; i++) {
    const c = format[i] as string
    if (c !== "%") {
      out += c
      continue
    }
    let j = i + 1
    let left = false
    let plus = false
    let zero = false
    let space = false
    let sharp = false
    for (; j < format.length; j++) {
      const f = format[j]
      if (f === "-") left = true
      else if (f === "+") plus = true
      else if (f === "0") zero = true
      else if (f === " ") space = true
      else if (f === "#") sharp = true
      else break
    }
    const readNumber = (): number | undefined => {
      if (format[j] === "*") {
        j++
        const n = integer(args[argIndex++])
        return n
      }
      const m = /^\d+/.exec(format.slice(j))
      if (m === null) return undefined
      j += m[0].length
      return Number(m[0])
    }
    const width = readNumber()
    let precision: number | undefined
    if (format[j] === ".") {
      j++
      precision = readNumber() ?? 0
    }
    const verb = format[j]
    i = j
    if (verb === undefined) {
      out += "%!(NOVERB)"
      break
    }
    if (verb === "%") {
      out += "%"
      continue
    }
    if (argIndex >= args.length) {
      out += `%!${verb}(MISSING)`
      continue
    }
    // One operand; lists and maps are formatted element by element, as Go does for every verb.
    const one = (arg: Value): string => {
      let s: string
      const bad = () => `%!${verb}(${goTypeName(arg)}=${formatValue(arg)})`
      const signed = (n: string, value: number) => (value >= 0 && plus ? `+${n}` : value >= 0 && space ? ` ${n}` : n)
      switch (verb) {
        case "v":
          s = typeof arg === "string" && sharp ? goQuote(arg) : formatValue(arg)
          if (typeof arg === "number") s = signed(s, arg)
          break
        case "s":
          s = typeof arg === "number" || typeof arg === "boolean" ? bad() : formatValue(arg)
          if (precision !== undefined && typeof arg === "string") s = [...s].slice(0, precision).join("")
          break
        case "q":
          s =
            typeof arg === "string" ? goQuote(arg) : typeof arg === "number" ? `'${String.fromCodePoint(arg)}'` : bad()
          break
        case "t":
          s = typeof arg === "boolean" ? String(arg) : bad()
          break
        case "d":
          s = typeof arg === "number" && Number.isInteger(arg) ? signed(formatNumber(arg), arg) : bad()
          break
        case "c":
          s = typeof arg === "number" ? String.fromCodePoint(arg) : bad()
          break
        case "x":
        case "X":
        case "o":
        case "b": {
          const base = verb === "o" ? 8 : verb === "b" ? 2 : 16
          if (typeof arg === "number" && Number.isInteger(arg)) s = arg.toString(base)
          else if (typeof arg === "string" && base === 16) s = Buffer.from(arg, "utf8").toString("hex")
          else s = bad()
          if (verb === "X") s = s.toUpperCase()
          if (sharp && base === 16 && typeof arg === "number") s = `0${verb}${s}`
          break
        }
        case "f":
        case "F":
        case "e":
        case "E":
        case "g":
        case "G": {
          if (typeof arg !== "number") {
            s = bad()
            break
          }
          const lower = verb.toLowerCase()
          s =
            lower === "f"
              ? arg.toFixed(precision ?? 6)
              : lower === "e"
                ? arg.toExponential(precision ?? 6).replace(/e([+-])(\d)$/, "e$10$2")
                : precision === undefined
                  ? formatNumber(arg)
                  : String(Number(arg.toPrecision(precision)))
          if (verb === "E" || verb === "G") s = s.toUpperCase()
          s = signed(s, arg)
          break
        }
        default:
          s = `%!${verb}(${goTypeName(arg)}=${formatValue(arg)})`
      }
      return s
    }
    const formatted = (arg: Value): string =>
      verb === "v" || verb === "T"
        ? one(arg)
        : Array.isArray(arg)
          ? `[${arg.map(formatted).join(" ")}]`
          : isMap(arg)
            ? `map[${Object.keys(arg)
                .sort()
                .map((k) => `${k}:${formatted(arg[k])}`)
                .join(" ")}]`
            : one(arg)
    const s = formatted(args[argIndex++])
    out += pad(s, width, left, zero && !left && verb !== "s" && verb !== "q" && verb !== "v")
  }
  if (argIndex < args.length) {
    out += `%!(EXTRA ${args
      .slice(argIndex)
      .map((a) => `${goTypeName(a)}=${formatValue(a)}`)
      .join(", ")})`
  }
  return out
}
