/**
 * YAML read within the nesting and node bounds of yaml-limits.ts, checked while the text is
 * tokenised, before any document is built. Both readers do it with their own machinery:
 *
 * - js-yaml (the fast path) parses to a flat event list with its `maxDepth` (the bound on
 *   collections inside collections); the nodes of each document are counted on the events
 *   before any value is constructed.
 * - the `yaml` library (the slow path, and every other reader of YAML text) is driven token by
 *   token: its CST parser keeps the open collections on an explicit stack, so the depth is read
 *   off that stack and the nodes counted on the tokens, and reading stops at the first bound
 *   crossed. Without this the library builds the whole tree first: 1.2 GB and seconds of a
 *   blocked event loop for 2 MB of `[[[[`, and a stack overflow when composing it.
 */
import { constructFromEvents, EVENT_ID, type Schema as JsYamlSchema, parseEvents } from "js-yaml"
import {
  Composer,
  CST,
  type Document,
  type DocumentOptions,
  Lexer,
  LineCounter,
  type ParseOptions,
  Parser,
  type SchemaOptions,
  YAMLParseError,
} from "yaml"
import { MAX_DOCUMENT_NODES, MAX_NESTING_DEPTH, nestingProblem, nodesProblem } from "./yaml-limits.js"

/** A bound a document crossed: which document (0-based, as the parser numbers them) and where. */
export interface YamlLimitProblem {
  readonly documentIndex: number
  /** 1-based line of the text where the bound was crossed. */
  readonly line: number
  readonly message: string
}

export interface YamlBounds {
  readonly maxDepth: number
  readonly maxNodes: number
}

export const DEFAULT_YAML_BOUNDS: YamlBounds = { maxDepth: MAX_NESTING_DEPTH, maxNodes: MAX_DOCUMENT_NODES }

/** The problem's text with its place: `document 2, line 14: ...` (for readers without issues). */
export const describeYamlLimitProblem = (problem: YamlLimitProblem): string =>
  `document ${problem.documentIndex}, line ${problem.line}: ${problem.message}`

// ---------------------------------------------------------------------------------------------
// js-yaml

/** js-yaml events that are nodes (a mapping, a sequence, a scalar or an alias). */
const isNodeEvent = (type: number): boolean =>
  type === EVENT_ID.SCALAR || type === EVENT_ID.SEQUENCE || type === EVENT_ID.MAPPING || type === EVENT_ID.ALIAS

/** 1-based line of `offset` in `text`. */
const lineAt = (text: string, offset: number): number => {
  let line = 1
  for (let i = text.indexOf("\n"); i >= 0 && i < offset; i = text.indexOf("\n", i + 1)) line++
  return line
}

/** The source offset an event starts at (every node event has one; -1 when absent). */
const eventOffset = (event: ReturnType<typeof parseEvents>[number]): number => {
  switch (event.type) {
    case EVENT_ID.SCALAR:
      return event.valueStart
    case EVENT_ID.ALIAS:
      return event.anchorStart
    case EVENT_ID.SEQUENCE:
    case EVENT_ID.MAPPING:
      return event.start
    default:
      return -1
  }
}

/**
 * The documents of `text` read by js-yaml within `bounds`; a problem when a document has too
 * many nodes; `undefined` when js-yaml cannot read the text (a syntax error, a construct it
 * refuses, or nesting over the bound): the caller then reads it with `parseDocumentsBounded`,
 * which reports the precise error, and the same nesting bound.
 */
export const jsYamlDocumentsBounded = (
  text: string,
  options: { readonly schema: JsYamlSchema; readonly maxAliases: number },
  bounds: YamlBounds = DEFAULT_YAML_BOUNDS,
): { readonly documents: ReadonlyArray<unknown> } | { readonly problem: YamlLimitProblem } | undefined => {
  let events: ReturnType<typeof parseEvents>
  try {
    // js-yaml counts the document as a level, and the innermost scalar in some forms but not in
    // others: with one level for the document it never admits more than the bound, and a text it
    // refuses at the bound is read by the exact `yaml` path.
    events = parseEvents(text, { maxDepth: bounds.maxDepth + 1 })
  } catch {
    return undefined
  }
  let documentIndex = -1
  let nodes = 0
  for (const event of events) {
    if (event.type === EVENT_ID.DOCUMENT) {
      documentIndex++
      nodes = 0
    } else if (isNodeEvent(event.type) && ++nodes > bounds.maxNodes) {
      return {
        problem: {
          documentIndex: Math.max(documentIndex, 0),
          line: lineAt(text, Math.max(eventOffset(event), 0)),
          message: nodesProblem(bounds.maxNodes),
        },
      }
    }
  }
  try {
    return { documents: constructFromEvents(events, { source: text, ...options }) }
  } catch {
    return undefined
  }
}

// ---------------------------------------------------------------------------------------------
// `yaml` library

/** CST tokens that are collections: the nesting depth is how many of them are open. */
const COLLECTION_TOKENS = new Set(["block-map", "block-seq", "flow-collection"])

/** Lexical tokens counted as nodes: scalars, aliases, flow collections and sequence entries. */
const NODE_LEXEMES = new Set<string>([
  "scalar",
  "single-quoted-scalar",
  "double-quoted-scalar",
  "block-scalar-header",
  "alias",
  "flow-map-start",
  "flow-seq-start",
  "seq-item-ind",
])

/** Lexical tokens that start a document (the node count is per document). */
const DOCUMENT_LEXEMES = new Set<string>(["doc-mode", "doc-start"])

export interface BoundedDocuments {
  /** The documents read before the first bound crossed (all of them when none was). */
  readonly documents: ReadonlyArray<Document.Parsed>
  readonly problem?: YamlLimitProblem
}

type YamlOptions = ParseOptions & DocumentOptions & SchemaOptions

/**
 * What `prettyErrors` (on by default) does to the `yaml` library's errors: each gets its line and
 * column (`linePos`) and its message says where, with the line quoted under a caret.
 */
const locateErrors = (text: string, lines: LineCounter, document: Document.Parsed): void => {
  for (const error of [...document.errors, ...document.warnings]) {
    if (error.pos[0] === -1) continue
    const start = lines.linePos(error.pos[0])
    const end = lines.linePos(error.pos[1])
    error.linePos = [start, end]
    error.message += ` at line ${start.line}, column ${start.col}`
    // The line (at most 80 characters, cut around the column), the one before it too when the
    // error is at the start of its line, and a caret under the error's span.
    let column = start.col - 1
    let shown = text.slice(lines.lineStarts[start.line - 1], lines.lineStarts[start.line]).replace(/[\n\r]+$/, "")
    if (column >= 60 && shown.length > 80) {
      const cut = Math.min(column - 39, shown.length - 79)
      shown = `…${shown.slice(cut)}`
      column -= cut - 1
    }
    if (shown.length > 80) shown = `${shown.slice(0, 79)}…`
    if (start.line > 1 && /^ *$/.test(shown.slice(0, column))) {
      const before = text.slice(lines.lineStarts[start.line - 2], lines.lineStarts[start.line - 1])
      shown = (before.length > 80 ? `${before.slice(0, 79)}…\n` : before) + shown
    }
    if (!/[^ ]/.test(shown)) continue
    const width =
      end.line === start.line && end.col > start.col ? Math.max(1, Math.min(end.col - start.col, 80 - column)) : 1
    error.message += `:\n\n${shown}\n${" ".repeat(column)}${"^".repeat(width)}\n`
  }
}

/**
 * `parseAllDocuments` of the `yaml` library, stopping at the first document that nests deeper or
 * has more nodes than `bounds`: the documents before it are returned with the problem, nothing
 * of it or after it is built. The same work as `parseAllDocuments` otherwise: the parser's tokens
 * are composed as they come.
 */
export const parseDocumentsBounded = (
  text: string,
  options: YamlOptions = {},
  bounds: YamlBounds = DEFAULT_YAML_BOUNDS,
): BoundedDocuments => {
  const lines = options.lineCounter ?? new LineCounter()
  const parser = new Parser(lines.addNewLine)
  // `Parser.parse` counts the start of the input as a line start; driven a token at a time, it
  // does not.
  lines.addNewLine(0)
  const composer = new Composer(options)
  const documents: Array<Document.Parsed> = []
  const done = (problem?: YamlLimitProblem): BoundedDocuments => {
    if (options.prettyErrors !== false) for (const document of documents) locateErrors(text, lines, document)
    return problem === undefined ? { documents } : { documents, problem }
  }
  const fail = (message: string): BoundedDocuments => {
    // The composer holds the document before the one in progress until the next one starts.
    for (const document of composer.end(false, parser.offset)) documents.push(document)
    return done({ documentIndex: documents.length, line: Math.max(lines.linePos(parser.offset).line, 1), message })
  }
  let nodes = 0
  for (const lexeme of new Lexer().lex(text)) {
    const type = CST.tokenType(lexeme)
    if (type !== null && DOCUMENT_LEXEMES.has(type)) nodes = 0
    else if (type !== null && NODE_LEXEMES.has(type) && ++nodes > bounds.maxNodes)
      return fail(nodesProblem(bounds.maxNodes))
    for (const token of parser.next(lexeme)) for (const document of composer.next(token)) documents.push(document)
    // The stack holds the document and the tokens being built; only a long one needs counting.
    if (parser.stack.length > bounds.maxDepth) {
      let depth = 0
      for (const token of parser.stack) if (COLLECTION_TOKENS.has(token.type)) depth++
      if (depth > bounds.maxDepth) return fail(nestingProblem(bounds.maxDepth))
    }
  }
  for (const token of parser.end()) for (const document of composer.next(token)) documents.push(document)
  for (const document of composer.end(false, text.length)) documents.push(document)
  return done()
}

/**
 * `parseDocument` (a text of one document) within `bounds`: the document (an empty text is an
 * empty document; a second document is an error of the first, as `parseDocument` has it), or
 * the problem.
 */
export const parseDocumentBounded = (
  text: string,
  options: YamlOptions = {},
  bounds: YamlBounds = DEFAULT_YAML_BOUNDS,
): { readonly document: Document.Parsed } | { readonly problem: YamlLimitProblem } => {
  const lines = options.lineCounter ?? new LineCounter()
  const { documents, problem } = parseDocumentsBounded(
    text,
    { ...options, lineCounter: lines, prettyErrors: false },
    bounds,
  )
  if (problem !== undefined) return { problem }
  const [first, second] = documents
  const document = first ?? new Composer(options).end(true, text.length).next().value
  if (document === undefined) return { problem: { documentIndex: 0, line: 1, message: "no YAML document" } }
  if (second !== undefined) {
    document.errors.push(
      new YAMLParseError(
        [second.range[0], second.range[1]],
        "MULTIPLE_DOCS",
        "Source contains multiple documents; please use YAML.parseAllDocuments()",
      ),
    )
  }
  if (options.prettyErrors !== false) locateErrors(text, lines, document)
  return { document }
}
