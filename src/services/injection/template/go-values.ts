/**
 * How the reference's template language sees JSON values: truth (false, 0, nil and empty
 * strings, lists and maps are false), printing as Go's fmt `%v` does (`[a b]`, `map[k:v]` with
 * sorted keys, nil as `<nil>`; a missing value printed by an action is `<no value>`), and the
 * comparisons of `eq`/`lt`. All numbers are one kind here (Go distinguishes int and float64;
 * JSON-decoded values are float64 in the reference, so its templates compare like kinds anyway).
 */
import { TemplateError } from "./errors.js"

export type Value = unknown

export const isMap = (v: Value): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v)

export const truth = (v: Value): boolean => {
  if (v === undefined || v === null || v === false || v === 0 || v === "") return false
  if (Array.isArray(v)) return v.length > 0
  if (isMap(v)) return Object.keys(v).length > 0
  return true
}

/** Go's `%v`: what `print`, `printf "%v"` and an action write. */
export const formatValue = (v: Value, nested = false): string => {
  if (v === undefined || v === null) return "<nil>"
  if (typeof v === "string") return v
  if (typeof v === "number") return formatNumber(v)
  if (typeof v === "boolean") return v ? "true" : "false"
  if (Array.isArray(v)) return `[${v.map((e) => formatValue(e, true)).join(" ")}]`
  if (isMap(v)) {
    const keys = Object.keys(v).sort()
    return `map[${keys.map((k) => `${k}:${formatValue(v[k], true)}`).join(" ")}]`
  }
  return nested ? String(v) : String(v)
}

/**
 * Integers in decimal; others as Go's %v of a float64 (shortest form, exponent past 1e21). The
 * reference holds values-file numbers as float64 and so prints 1000000 as 1e+06; integers are
 * written whole here, as the pod's own (int) fields are there.
 */
export const formatNumber = (n: number): string => {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return n.toFixed(0)
  const s = String(n)
  return s.replace(/e([+-])(\d)$/, "e$10$2")
}

/** What an action writes: a missing or null value is `<no value>`, as Go prints a nil interface. */
export const actionText = (v: Value): string => (v === undefined || v === null ? "<no value>" : formatValue(v))

/** Go's reflect kind of a JSON value (sprig's `kindIs` names); numbers are int when whole. */
export const goKind = (v: Value): "invalid" | "bool" | "int" | "float64" | "string" | "slice" | "map" =>
  v === undefined || v === null
    ? "invalid"
    : typeof v === "boolean"
      ? "bool"
      : typeof v === "number"
        ? Number.isInteger(v)
          ? "int"
          : "float64"
        : typeof v === "string"
          ? "string"
          : Array.isArray(v)
            ? "slice"
            : "map"

/** Go's `%T` of a JSON value as the reference holds it. */
export const goTypeName = (v: Value): string => {
  const kind = goKind(v)
  return kind === "invalid"
    ? "<nil>"
    : kind === "slice"
      ? "[]interface {}"
      : kind === "map"
        ? "map[string]interface {}"
        : kind
}

type Kind = "nil" | "bool" | "number" | "string" | "other"

/** The kinds comparisons tell apart (one number kind: see above). */
const kindOf = (v: Value): Kind => {
  const kind = goKind(v)
  return kind === "invalid"
    ? "nil"
    : kind === "int" || kind === "float64"
      ? "number"
      : kind === "slice" || kind === "map"
        ? "other"
        : kind
}

/**
 * Go's `eq` for two values: basic kinds compare by value; nil equals only nil; values of two
 * different basic kinds are an error ("incompatible types for comparison"), as in Go; lists and
 * maps are not comparable.
 */
export const equals = (a: Value, b: Value): boolean => {
  const ka = kindOf(a)
  const kb = kindOf(b)
  if (ka === "nil" || kb === "nil") return ka === kb
  if (ka !== kb) throw new TemplateError("incompatible types for comparison")
  if (ka === "other") throw new TemplateError("non-comparable types for comparison")
  return a === b
}

/** Go's `lt`: numbers and strings only, of the same kind. */
export const less = (a: Value, b: Value): boolean => {
  const ka = kindOf(a)
  const kb = kindOf(b)
  if (ka !== kb) throw new TemplateError("incompatible types for comparison")
  if (ka !== "number" && ka !== "string") throw new TemplateError("invalid type for comparison")
  return (a as number | string) < (b as number | string)
}

/** Sprig's `empty` (what `default` tests): nil, false, 0, "", and empty lists and maps. */
export const isEmpty = (v: Value): boolean => !truth(v)

/** Sprig's `strval`/Go's fmt.Sprint of one value, for functions taking strings. */
export const toStr = (v: Value): string => (v === undefined || v === null ? "" : formatValue(v))

/** An integer argument (sprig's toInt rules: numbers and numeric strings; others are 0). */
export const toInt = (v: Value): number => {
  if (typeof v === "number") return Math.trunc(v)
  if (typeof v === "string" && v.trim() !== "" && !Number.isNaN(Number(v))) return Math.trunc(Number(v))
  if (typeof v === "boolean") return v ? 1 : 0
  return 0
}
