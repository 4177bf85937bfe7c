/**
 * The YAML dialect of the reference: it reads manifests with Go's YAML reader (go-yaml v2, a
 * YAML 1.1 reader, whose result is then turned into JSON), not with a YAML 1.2 one. For the
 * documents that reader accepts, this module makes both of our readers (js-yaml on the fast path,
 * the `yaml` library on the slow one) produce the values it produces:
 *
 * - Plain scalars resolve as go-yaml v2 resolves them: `y`/`yes`/`on` and `n`/`no`/`off` (in
 *   their three spellings) are booleans; integers are read as Go reads them with base prefixes
 *   (`0755` is octal 493, `0x1F`, `0o17`, `0b101`; `_` separators dropped); `08` is the float 8;
 *   no sexagesimal numbers (`1:30` stays a string); timestamps stay strings.
 * - Inside flow collections a `:` directly followed by `,`, `]` or `}` belongs to the plain
 *   scalar before it (`[1.2.3.4, 2001:db8::]` is two strings), where YAML 1.2 reads an implicit
 *   key (a one-pair map) or refuses the document.
 */
import { defineScalarTag, FAILSAFE_SCHEMA, type Schema as JsYamlSchema, NOT_RESOLVED } from "js-yaml"
import { CST, Lexer, type ParseOptions, type ScalarTag, type SchemaOptions } from "yaml"

// ---------------------------------------------------------------------------------------------
// Scalars

const NULLS = new Set(["", "~", "null", "Null", "NULL"])
const TRUES = new Set(["y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"])
const FALSES = new Set(["n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"])

/** Integers as Go's `strconv.ParseInt(s, 0, 64)` reads them (underscores already removed). */
const GO_INT = /^([-+]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/
/** go-yaml v2's float syntax, tried after the integer forms. */
const GO_FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/
/** A plain scalar starting with `.` is given to `strconv.ParseFloat` as written. */
const GO_DOT_FLOAT = /^\.[0-9]+(?:[eE][-+]?[0-9]+)?$/
const SPECIAL_FLOATS = new Map<string, number>([
  ...[".nan", ".NaN", ".NAN"].map((s) => [s, Number.NaN] as const),
  ...[".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"].map((s) => [s, Number.POSITIVE_INFINITY] as const),
  ...["-.inf", "-.Inf", "-.INF"].map((s) => [s, Number.NEGATIVE_INFINITY] as const),
])

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n
const UINT64_MAX = 2n ** 64n - 1n

const goInt = (plain: string): number | undefined => {
  const match = GO_INT.exec(plain)
  if (match === null) return undefined
  const sign = match[1] ?? ""
  const digits = match[2] ?? ""
  // A leading 0 means octal in Go; BigInt wants the 0o prefix for it.
  const magnitude = BigInt(/^0[0-7]+$/.test(digits) ? `0o${digits.slice(1)}` : digits)
  const value = sign === "-" ? -magnitude : magnitude
  if (value >= INT64_MIN && value <= INT64_MAX) return Number(value)
  // Beyond int64 Go tries ParseUint, which takes no sign.
  if (sign === "" && value <= UINT64_MAX) return Number(value)
  return undefined
}

/** The number a plain scalar is in Go's YAML, or undefined when it is not one. */
export const goNumber = (source: string): number | undefined => {
  const special = SPECIAL_FLOATS.get(source)
  if (special !== undefined) return special
  const first = source.charAt(0)
  if (first === ".") return GO_DOT_FLOAT.test(source) ? Number(source) : undefined
  if (!(first === "-" || first === "+" || (first >= "0" && first <= "9"))) return undefined
  const plain = source.replaceAll("_", "")
  const int = goInt(plain)
  if (int !== undefined) return int
  if (!GO_FLOAT.test(plain)) return undefined
  const float = Number(plain)
  // Go's ParseFloat fails on overflow; the scalar then stays a string.
  return Number.isFinite(float) ? float : undefined
}

/** The value go-yaml v2 gives a plain (unquoted) scalar. */
export const goPlainScalar = (source: string): unknown => {
  if (NULLS.has(source)) return null
  if (TRUES.has(source)) return true
  if (FALSES.has(source)) return false
  return goNumber(source) ?? source
}

// ---------------------------------------------------------------------------------------------
// js-yaml (fast path)

const loadOnly = () => false

/** js-yaml's schema for Go's YAML: strings, lists and maps, plus Go's null, bool and numbers. */
export const GO_JS_YAML_SCHEMA: JsYamlSchema = FAILSAFE_SCHEMA.withTags(
  defineScalarTag("tag:yaml.org,2002:null", {
    implicit: true,
    resolve: (source) => (NULLS.has(source) ? null : NOT_RESOLVED),
    identify: loadOnly,
  }),
  defineScalarTag("tag:yaml.org,2002:bool", {
    implicit: true,
    resolve: (source) => (TRUES.has(source) ? true : FALSES.has(source) ? false : NOT_RESOLVED),
    identify: loadOnly,
  }),
  defineScalarTag("tag:yaml.org,2002:float", {
    implicit: true,
    resolve: (source) => goNumber(source) ?? NOT_RESOLVED,
    identify: loadOnly,
  }),
)

// ---------------------------------------------------------------------------------------------
// `yaml` library (slow path)

/** A `test` that runs a predicate: the `yaml` library only calls `.test` on a tag's pattern. */
class Predicate extends RegExp {
  constructor(private readonly predicate: (source: string) => boolean) {
    super("")
  }
  override test(source: string): boolean {
    return this.predicate(source)
  }
}

const goTags: ReadonlyArray<ScalarTag> = [
  {
    tag: "tag:yaml.org,2002:null",
    default: true,
    test: new Predicate((s) => NULLS.has(s)),
    resolve: () => null,
  },
  {
    tag: "tag:yaml.org,2002:bool",
    default: true,
    test: new Predicate((s) => TRUES.has(s) || FALSES.has(s)),
    resolve: (s) => TRUES.has(s),
  },
  {
    tag: "tag:yaml.org,2002:float",
    default: true,
    test: new Predicate((s) => goNumber(s) !== undefined),
    resolve: (s) => goNumber(s),
  },
]

/** `yaml` library options for Go's YAML (merge keys are YAML 1.1 and go-yaml v2 reads them). */
export const GO_YAML_OPTIONS: ParseOptions & SchemaOptions = {
  schema: "failsafe",
  customTags: [...goTags],
  merge: true,
}

// ---------------------------------------------------------------------------------------------
// Flow-context colons

/** A `:` followed by a flow indicator that ends the collection or its entry. */
const COLON_BEFORE_FLOW_END = /:[,\]}]/
const FLOW_ENDS = new Set([",", "]", "}"])

const singleQuoted = (text: string): string => `'${text.replaceAll("'", "''")}'`

/**
 * The text with every plain scalar that Go's reader extends over a following `:` (in a flow
 * collection, the `:` directly followed by `,`, `]` or `}`) written as the quoted string Go reads,
 * so that a YAML 1.2 reader reads the same. Go resolves such a scalar as a string (a number or a
 * boolean has no `:`), so quoting it keeps its value. Lines do not move; columns on those lines
 * shift by the quotes.
 */
export const goFlowScalars = (text: string): string => {
  if (!COLON_BEFORE_FLOW_END.test(text)) return text
  let out = ""
  let copied = 0
  let offset = 0
  let depth = 0
  let scalarNext = false
  let plain: { readonly start: number; readonly end: number } | undefined
  for (const token of new Lexer().lex(text)) {
    const type = CST.tokenType(token)
    // Control tokens (document and flow-end markers) take no room in the text; a BOM does.
    if (type === "doc-mode" || type === "flow-error-end") continue
    if (type === "scalar") {
      scalarNext = true
      continue
    }
    const start = offset
    offset += token.length
    if (scalarNext) {
      scalarNext = false
      // The content of a plain scalar (quoted scalars carry their own type and no marker).
      if (depth > 0 && type === null) {
        plain = { start, end: offset }
        continue
      }
    }
    if (type === "flow-seq-start" || type === "flow-map-start") depth += 1
    else if (type === "flow-seq-end" || type === "flow-map-end") depth = Math.max(0, depth - 1)
    else if (
      type === "map-value-ind" &&
      plain !== undefined &&
      plain.end === start &&
      FLOW_ENDS.has(text.charAt(offset))
    ) {
      out += text.slice(copied, plain.start) + singleQuoted(text.slice(plain.start, offset))
      copied = offset
    }
    plain = undefined
  }
  return copied === 0 ? text : out + text.slice(copied)
}
