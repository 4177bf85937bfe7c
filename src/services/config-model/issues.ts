/**
 * Turns Effect Schema parse failures into field-path issues (`spec.http[0].route[1].weight`),
 * and runs the cross-field checks a failed decode skipped.
 */
import { Either, Option, ParseResult, Schema, SchemaAST } from "effect"
import { fastDecode } from "./fast-decode.js"
import { CrossFieldCheck, type CrossFieldCheckFn } from "./schemas/common.js"

export interface FieldProblem {
  /** Path segments relative to the decoded value. */
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** Renders path segments as `a.b[0].c`, prefixed by `prefix` when given. */
export const renderPath = (segments: ReadonlyArray<PropertyKey>, prefix = ""): string => {
  let out = prefix
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`
    else {
      const text = String(segment)
      if (/^[A-Za-z_$][\w$-]*$/.test(text)) out += out === "" ? text : `.${text}`
      else out += `[${JSON.stringify(text)}]`
    }
  }
  return out
}

/** What a type in Schema's own words (`ReadonlyArray<...>`, `Struct (Encoded side)`) is called in YAML. */
const describeExpected = (expected: string): string | undefined => {
  if (expected.startsWith("ReadonlyArray<")) return "a list"
  if (expected.startsWith("Struct") || expected.startsWith("{")) return "a mapping"
  if (expected === "string" || expected === "number" || expected === "boolean") return `a ${expected}`
  return undefined
}

const cleanMessage = (tag: string, message: string): string => {
  if (tag === "Missing") return "is required"
  if (tag === "Unexpected") return "unknown field"
  const match = /^Expected (.+), actual (.*)$/s.exec(message)
  if (match !== null) {
    const expected = describeExpected(match[1] ?? "")
    if (expected !== undefined) {
      const actual = match[2] ?? ""
      return `expected ${expected}, got ${actual.length > 60 ? `${actual.slice(0, 57)}...` : actual}`
    }
  }
  return message
}

/** Union members of optional fields (`null`, `undefined`) only add noise to a member's real problem. */
const NOISE = /^Expected (null|undefined), actual /

const problemKey = (problem: FieldProblem) => `${renderPath(problem.path)}\u0000${problem.message}`

/** Every problem in a parse error, each with its path; duplicates collapsed. */
export const parseErrorProblems = (error: ParseResult.ParseError): ReadonlyArray<FieldProblem> => {
  const seen = new Set<string>()
  const out: Array<FieldProblem> = []
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    if (NOISE.test(issue.message)) continue
    const problem = { path: issue.path, message: cleanMessage(issue._tag, issue.message) }
    const key = problemKey(problem)
    if (seen.has(key)) continue
    seen.add(key)
    out.push(problem)
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Second pass: cross-field checks over values whose own decode failed further down.

// Safe to share between servers: a memo of immutable Schema ASTs, not of any input.
const stripped = new WeakMap<SchemaAST.AST, SchemaAST.AST>()

/** The same schema without refinements: only shapes, types and transformations (defaults). */
const stripRefinements = (ast: SchemaAST.AST): SchemaAST.AST => {
  const cached = stripped.get(ast)
  if (cached !== undefined) return cached
  let out: SchemaAST.AST
  switch (ast._tag) {
    case "Refinement":
      out = stripRefinements(ast.from)
      break
    case "Transformation":
      out = new SchemaAST.Transformation(
        stripRefinements(ast.from),
        stripRefinements(ast.to),
        ast.transformation,
        ast.annotations,
      )
      break
    case "TypeLiteral":
      out = new SchemaAST.TypeLiteral(
        ast.propertySignatures.map(
          (ps) =>
            new SchemaAST.PropertySignature(
              ps.name,
              stripRefinements(ps.type),
              ps.isOptional,
              ps.isReadonly,
              ps.annotations,
            ),
        ),
        ast.indexSignatures.map(
          (is) => new SchemaAST.IndexSignature(is.parameter, stripRefinements(is.type), is.isReadonly),
        ),
        ast.annotations,
      )
      break
    case "TupleType":
      out = new SchemaAST.TupleType(
        ast.elements.map((e) => new SchemaAST.OptionalType(stripRefinements(e.type), e.isOptional, e.annotations)),
        ast.rest.map((r) => new SchemaAST.Type(stripRefinements(r.type), r.annotations)),
        ast.isReadonly,
        ast.annotations,
      )
      break
    case "Union":
      out = SchemaAST.Union.make(ast.types.map(stripRefinements), ast.annotations)
      break
    case "Suspend": {
      const f = ast.f
      out = new SchemaAST.Suspend(() => stripRefinements(f()), ast.annotations)
      break
    }
    default:
      out = ast
  }
  stripped.set(ast, out)
  return out
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const walk = (ast: SchemaAST.AST, raw: unknown, path: ReadonlyArray<PropertyKey>, out: Array<FieldProblem>): void => {
  switch (ast._tag) {
    case "Refinement": {
      const check = ast.annotations[CrossFieldCheck] as CrossFieldCheckFn | undefined
      if (check !== undefined) {
        const lenient = Schema.make(stripRefinements(ast.from))
        const decoded = Schema.decodeUnknownEither(lenient)(raw, { onExcessProperty: "ignore" })
        if (Either.isRight(decoded)) {
          try {
            check(decoded.right, (p, message) => out.push({ path: [...path, ...p], message }))
          } catch {
            // A check that cannot cope with a partially valid value reports nothing here.
          }
        }
      }
      walk(ast.from, raw, path, out)
      return
    }
    case "Transformation":
      walk(ast.from, raw, path, out)
      return
    case "TypeLiteral": {
      if (!isRecord(raw)) return
      const names = new Set<PropertyKey>()
      for (const ps of ast.propertySignatures) {
        names.add(ps.name)
        if (typeof ps.name === "string" && ps.name in raw) walk(ps.type, raw[ps.name], [...path, ps.name], out)
      }
      for (const is of ast.indexSignatures) {
        for (const [key, value] of Object.entries(raw)) if (!names.has(key)) walk(is.type, value, [...path, key], out)
      }
      return
    }
    case "TupleType": {
      if (!Array.isArray(raw)) return
      raw.forEach((item, i) => {
        const element = ast.elements[i]?.type ?? ast.rest[0]?.type
        if (element !== undefined) walk(element, item, [...path, i], out)
      })
      return
    }
    case "Union":
      if (raw === null || raw === undefined) return
      for (const member of ast.types) {
        if (member._tag === "Literal" || member._tag === "UndefinedKeyword") continue
        walk(member, raw, path, out)
      }
      return
    case "Suspend":
      walk(ast.f(), raw, path, out)
      return
    default:
      return
  }
}

type EitherDecoder = (
  input: unknown,
  options?: SchemaAST.ParseOptions,
) => Either.Either<unknown, ParseResult.ParseError>

/** One decoder per schema, built on first use (Schema.decodeUnknownEither compiles the AST each call). */
// Safe to share between servers: compiled once per (immutable) schema, whatever it decodes.
const decoders = new WeakMap<Schema.Schema<unknown, unknown>, EitherDecoder>()

const decoderOf = (schema: Schema.Schema<unknown, unknown>): EitherDecoder => {
  let decoder = decoders.get(schema)
  if (decoder === undefined) {
    decoder = Schema.decodeUnknownEither(schema)
    decoders.set(schema, decoder)
  }
  return decoder
}

const STRICT_FIRST: SchemaAST.ParseOptions = { errors: "first", onExcessProperty: "error" }
const LENIENT_FIRST: SchemaAST.ParseOptions = { errors: "first", onExcessProperty: "ignore" }
const STRICT_ALL: SchemaAST.ParseOptions = { errors: "all", onExcessProperty: "error" }
const LENIENT_ALL: SchemaAST.ParseOptions = { errors: "all", onExcessProperty: "ignore" }

/**
 * Decodes `input` with every problem reported: schema problems (types, required and unknown
 * fields, value rules) and then every cross-field check whose value is well-typed, even when a
 * problem elsewhere in the document made the decode fail.
 *
 * Valid documents (the common case) are decoded by the fast path (fast-decode.ts), which mirrors
 * Effect's decoder on success; otherwise Effect decodes once, stopping at the first problem, and a
 * document with a problem is decoded again collecting every problem. The decoded value does not
 * depend on the `errors` option, only the failure's content does.
 */
export const decodeAll = <A>(
  schema: Schema.Schema<A, unknown>,
  input: unknown,
  options: { readonly strict: boolean },
): Either.Either<A, ReadonlyArray<FieldProblem>> => {
  const fast = fastDecode(schema, input, options.strict ? STRICT_FIRST : LENIENT_FIRST)
  if (Option.isSome(fast)) return Either.right(fast.value)
  const decode = decoderOf(schema as Schema.Schema<unknown, unknown>)
  const first = decode(input, options.strict ? STRICT_FIRST : LENIENT_FIRST)
  if (Either.isRight(first)) return Either.right(first.right as A)
  const decoded = decode(input, options.strict ? STRICT_ALL : LENIENT_ALL)
  if (Either.isRight(decoded)) return Either.right(decoded.right as A)
  const problems = [...parseErrorProblems(decoded.left)]
  const seen = new Set(problems.map(problemKey))
  const extra: Array<FieldProblem> = []
  walk(schema.ast, input, [], extra)
  for (const problem of extra) {
    const key = problemKey(problem)
    if (seen.has(key)) continue
    seen.add(key)
    problems.push(problem)
  }
  return Either.left(problems)
}
