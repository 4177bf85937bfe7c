/**
 * A fast decoder for the happy path: walks a schema's AST the way Effect Schema's decoder does
 * (same checks, same filters, same transformations, same output objects and key order) but
 * without building Eithers, closures and issue trees, which is where Effect's decoder spends
 * most of its time on large, valid documents.
 *
 * It only answers "valid, and here is the decoded value" or "not sure": any problem, and any AST
 * node it does not mirror exactly (declarations, template literals, tuples with elements,
 * effectful transformations, non-string index keys, unions where more than one member accepts
 * the value), gives None, and the caller decodes with Effect Schema, which then reports the
 * problems (or decides an ambiguous union) exactly as before.
 *
 * Why it exists: `npm run bench:config` loads 5,000 resources in about 1.6 s of CPU with it and
 * 2.6 s without it (target: under 2 s). It is one seam: `fastDecode`, called by `decodeAll`
 * (issues.ts) only, and checked against Effect's decoder on every kind's examples
 * (test/services/config-model/fast-decode.test.ts).
 */
import { Either, Option, type ParseResult, type Schema, type SchemaAST } from "effect"

/** "Not decoded here": the value is invalid, or the fast path cannot tell; use Effect's decoder. */
const NOT_DECODED: unique symbol = Symbol("mesh/config-model/NOT_DECODED")

class Unsupported extends Error {}

const hasOwn = (value: object, key: PropertyKey): boolean => Object.hasOwn(value, key)

const isRecord = (value: unknown): value is Record<PropertyKey, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

// Safe to share between servers: memos of the immutable Schema ASTs of the kinds, not of any input.
const suspended = new WeakMap<SchemaAST.Suspend, SchemaAST.AST>()

/** Effect decodes with `errors`/`onExcessProperty`; the filters receive the same options. */
const go = (ast: SchemaAST.AST, input: unknown, options: SchemaAST.ParseOptions): unknown => {
  switch (ast._tag) {
    case "StringKeyword":
      return typeof input === "string" ? input : NOT_DECODED
    case "NumberKeyword":
      return typeof input === "number" ? input : NOT_DECODED
    case "BooleanKeyword":
      return typeof input === "boolean" ? input : NOT_DECODED
    case "UnknownKeyword":
    case "AnyKeyword":
    case "VoidKeyword":
      return input
    case "Literal":
      return input === ast.literal ? input : NOT_DECODED
    case "UndefinedKeyword":
      return input === undefined ? input : NOT_DECODED
    case "NeverKeyword":
      return NOT_DECODED
    case "Enums":
      return ast.enums.some(([, value]) => value === input) ? input : NOT_DECODED
    case "Refinement": {
      const from = go(ast.from, input, options)
      if (from === NOT_DECODED) return NOT_DECODED
      return Option.isNone(ast.filter(from, options, ast)) ? from : NOT_DECODED
    }
    case "Transformation": {
      const from = go(ast.from, input, options)
      if (from === NOT_DECODED) return NOT_DECODED
      const transformation = ast.transformation
      let transformed: unknown
      switch (transformation._tag) {
        case "FinalTransformation": {
          const result = transformation.decode(from, options, ast, input) as unknown
          if (!Either.isEither(result)) throw new Unsupported()
          const either = result as Either.Either<unknown, ParseResult.ParseIssue>
          if (Either.isLeft(either)) return NOT_DECODED
          transformed = either.right
          break
        }
        case "ComposeTransformation":
          transformed = from
          break
        case "TypeLiteralTransformation": {
          // Effect rewrites the decoded object in place; only do that on an object built here.
          if (from === input) throw new Unsupported()
          const out = from as Record<PropertyKey, unknown>
          for (const pst of transformation.propertySignatureTransformations) {
            const o = pst.decode(hasOwn(out, pst.from) ? Option.some(out[pst.from]) : Option.none())
            delete out[pst.from]
            if (Option.isSome(o)) out[pst.to] = o.value
          }
          transformed = out
          break
        }
      }
      return go(ast.to, transformed, options)
    }
    case "TypeLiteral":
      return typeLiteral(ast, input, options)
    case "TupleType": {
      if (ast.elements.length > 0 || ast.rest.length !== 1) throw new Unsupported()
      if (!Array.isArray(input)) return NOT_DECODED
      const item = (ast.rest[0] as SchemaAST.Type).type
      const output: Array<unknown> = []
      for (const element of input) {
        const decoded = go(item, element, options)
        if (decoded === NOT_DECODED) return NOT_DECODED
        output.push(decoded)
      }
      return output
    }
    case "Union": {
      // Effect returns the first member (in its own candidate order) that decodes; when exactly
      // one member decodes, that is the one whatever the order.
      let result: unknown = NOT_DECODED
      for (const member of ast.types) {
        const decoded = go(member, input, options)
        if (decoded === NOT_DECODED) continue
        if (result !== NOT_DECODED) throw new Unsupported()
        result = decoded
      }
      return result
    }
    case "Suspend": {
      let target = suspended.get(ast)
      if (target === undefined) {
        target = ast.f()
        suspended.set(ast, target)
      }
      return go(target, input, options)
    }
    default:
      throw new Unsupported()
  }
}

/** Property names of a TypeLiteral; `undefined` when an index signature is not keyed by string. */
const literalInfo = new WeakMap<SchemaAST.TypeLiteral, ReadonlySet<PropertyKey> | undefined>()

const propertyNames = (ast: SchemaAST.TypeLiteral): ReadonlySet<PropertyKey> => {
  if (!literalInfo.has(ast)) {
    const supported = ast.indexSignatures.every((is) => is.parameter._tag === "StringKeyword")
    literalInfo.set(ast, supported ? new Set(ast.propertySignatures.map((ps) => ps.name)) : undefined)
  }
  const names = literalInfo.get(ast)
  if (names === undefined) throw new Unsupported()
  return names
}

const typeLiteral = (ast: SchemaAST.TypeLiteral, input: unknown, options: SchemaAST.ParseOptions): unknown => {
  const properties = ast.propertySignatures
  const indexes = ast.indexSignatures
  if (properties.length === 0 && indexes.length === 0)
    return input !== null && input !== undefined ? input : NOT_DECODED
  if (!isRecord(input)) return NOT_DECODED
  const names = propertyNames(ast)
  if (options.onExcessProperty === "preserve" || options.exact === true || options.propertyOrder === "original")
    throw new Unsupported()
  if (options.onExcessProperty === "error") {
    if (Object.getOwnPropertySymbols(input).length > 0) return NOT_DECODED
    if (indexes.length === 0) for (const key in input) if (hasOwn(input, key) && !names.has(key)) return NOT_DECODED
  }
  const output: Record<PropertyKey, unknown> = {}
  for (let i = 0; i < properties.length; i++) {
    const ps = properties[i] as SchemaAST.PropertySignature
    const hasKey = hasOwn(input, ps.name)
    if (!hasKey && ps.isOptional) continue
    const decoded = go(ps.type, input[ps.name], options)
    if (decoded === NOT_DECODED) return NOT_DECODED
    output[ps.name] = decoded
  }
  for (const is of indexes) {
    for (const key of Object.keys(input)) {
      const decoded = go(is.type, input[key], options)
      if (decoded === NOT_DECODED) return NOT_DECODED
      if (!names.has(key)) output[key] = decoded
    }
  }
  return output
}

/** ASTs the fast path met an unsupported node in: decoded with Effect from then on. */
const unsupported = new WeakSet<SchemaAST.AST>()

/**
 * `input` decoded by `schema` as Effect Schema would decode it on success; None when the value
 * is invalid or when this decoder cannot mirror Effect's result exactly.
 */
export const fastDecode = <A>(
  schema: Schema.Schema<A, unknown>,
  input: unknown,
  options: SchemaAST.ParseOptions,
): Option.Option<A> => {
  const ast = schema.ast
  if (unsupported.has(ast)) return Option.none()
  try {
    const decoded = go(ast, input, options)
    return decoded === NOT_DECODED ? Option.none() : Option.some(decoded as A)
  } catch (error) {
    // A filter that throws is left to Effect's decoder too, which behaves as it always did.
    if (error instanceof Unsupported) unsupported.add(ast)
    return Option.none()
  }
}
