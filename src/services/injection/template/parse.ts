/**
 * Parses a template of the reference's language (Go text/template) into its tree: actions and
 * pipelines, `if`/`else if`/`else`, `range` (`$i, $v :=`, `else`, `break`, `continue`), `with`
 * (`else with`), `define`/`template`/`block`, variables (`:=`, `=`), parenthesised pipelines
 * with field chains. Errors name the template and line (`template: <name>:<line>: …`); nesting
 * deeper than MAX_PARSE_DEPTH is refused so that a hostile ConfigMap cannot exhaust the stack.
 */
import { Either } from "effect"
import type { Arg, Command, Node, ParsedTemplate, Pipeline } from "./ast.js"
import { TemplateError } from "./errors.js"
import { lex, type Token } from "./lexer.js"

/** Blocks and parentheses nested deeper than this are refused (the shipped templates nest under 10). */
export const MAX_PARSE_DEPTH = 100

type Terminator = "end" | "else" | "eof"

class Parser {
  private pos = 0
  private depth = 0
  readonly defines = new Map<string, ReadonlyArray<Node>>()

  constructor(
    private readonly name: string,
    private readonly tokens: ReadonlyArray<Token>,
    private readonly functions: ReadonlySet<string> | undefined,
  ) {}

  private fail(message: string, line = this.peek()?.line ?? this.lastLine()): never {
    throw new TemplateError(`template: ${this.name}:${line}: ${message}`)
  }

  /** The input's last line (where an unexpected end of input is reported). */
  private lastLine(): number {
    const last = this.tokens[this.tokens.length - 1]
    if (last === undefined) return 1
    return last.line + (last.kind === "text" || last.kind === "string" ? last.value.split("\n").length - 1 : 0)
  }

  private peek(offset = 0): Token | undefined {
    return this.tokens[this.pos + offset]
  }

  private next(): Token {
    const t = this.tokens[this.pos++]
    if (t === undefined) this.fail("unexpected EOF")
    return t as Token
  }

  private expect(kind: Token["kind"], what: string): Token {
    const t = this.next()
    if (t.kind !== kind) this.fail(`unexpected ${describe(t)} in ${what}`, t.line)
    return t
  }

  private nest<A>(line: number, body: () => A): A {
    if (++this.depth > MAX_PARSE_DEPTH) this.fail(`nesting deeper than ${MAX_PARSE_DEPTH} levels`, line)
    try {
      return body()
    } finally {
      this.depth--
    }
  }

  /** A list of nodes up to `{{end}}`, `{{else …}}` (left unread after `else`) or the end of input. */
  parseList(allowed: ReadonlyArray<Terminator>, inRange: boolean): { nodes: Array<Node>; ended: Terminator } {
    const nodes: Array<Node> = []
    for (;;) {
      const t = this.peek()
      if (t === undefined) {
        if (!allowed.includes("eof")) this.fail("unexpected EOF")
        return { nodes, ended: "eof" }
      }
      if (t.kind === "text") {
        this.pos++
        nodes.push({ _tag: "Text", text: t.value })
        continue
      }
      this.expect("open", "template")
      const word = this.peek()
      if (word?.kind === "keyword") {
        if (word.value === "end") {
          this.pos++
          this.expect("close", "end")
          if (!allowed.includes("end")) this.fail("unexpected {{end}}", word.line)
          return { nodes, ended: "end" }
        }
        if (word.value === "else") {
          if (!allowed.includes("else")) this.fail("unexpected {{else}}", word.line)
          this.pos++
          return { nodes, ended: "else" }
        }
        const node = this.parseKeyword(word, inRange)
        if (node !== undefined) nodes.push(node)
        continue
      }
      const pipe = this.parsePipeline("command", true)
      this.expect("close", "command")
      nodes.push({ _tag: "Action", pipe })
    }
  }

  private parseKeyword(word: Token, inRange: boolean): Node | undefined {
    this.pos++
    switch (word.value) {
      case "if":
      case "with":
        return this.nest(word.line, () => this.parseControl(word.value === "if" ? "If" : "With", inRange))
      case "range":
        return this.nest(word.line, () => {
          const pipe = this.parsePipeline("range", true, 2)
          this.expect("close", "range")
          const body = this.parseList(["end", "else"], true)
          let elseList: Array<Node> | undefined
          if (body.ended === "else") {
            this.expect("close", "else")
            elseList = this.parseList(["end"], inRange).nodes
          }
          return { _tag: "Range", pipe, list: body.nodes, elseList }
        })
      case "break":
      case "continue":
        if (!inRange) this.fail(`{{${word.value}}} outside {{range}}`, word.line)
        this.expect("close", word.value)
        return { _tag: word.value === "break" ? "Break" : "Continue", line: word.line }
      case "template": {
        const name = this.expect("string", "template clause").value
        const pipe = this.peek()?.kind === "close" ? undefined : this.parsePipeline("template clause", false)
        this.expect("close", "template clause")
        return { _tag: "Template", name, pipe, line: word.line }
      }
      case "define":
      case "block": {
        if (word.value === "define" && this.depth > 0) this.fail("{{define}} inside a block", word.line)
        const name = this.expect("string", `${word.value} clause`).value
        const pipe = word.value === "block" ? this.parsePipeline("block clause", false) : undefined
        this.expect("close", `${word.value} clause`)
        const body = this.nest(word.line, () => this.parseList(["end"], false).nodes)
        if (this.defines.has(name) && body.some((n) => n._tag !== "Text" || n.text.trim() !== "")) {
          this.fail(`template: multiple definition of template "${name}"`, word.line)
        }
        this.defines.set(name, body)
        return word.value === "block" ? { _tag: "Template", name, pipe, line: word.line } : undefined
      }
      default:
        return this.fail(`unexpected keyword ${word.value}`, word.line)
    }
  }

  /** `if`/`with` with their `else`, `else if`, `else with` chains (which share one `{{end}}`). */
  private parseControl(tag: "If" | "With", inRange: boolean): Node {
    const pipe = this.parsePipeline(tag === "If" ? "if" : "with", true)
    this.expect("close", tag.toLowerCase())
    const body = this.parseList(["end", "else"], inRange)
    let elseList: Array<Node> | undefined
    if (body.ended === "else") {
      const chained = this.peek()
      if (chained?.kind === "keyword" && (chained.value === "if" || chained.value === "with")) {
        this.pos++
        elseList = [this.nest(chained.line, () => this.parseControl(chained.value === "if" ? "If" : "With", inRange))]
      } else {
        this.expect("close", "else")
        elseList = this.parseList(["end"], inRange).nodes
      }
    }
    return { _tag: tag, pipe, list: body.nodes, elseList }
  }

  /** `[$a[, $b] (:=|=)] command (| command)*`; declarations only where `allowDecl`. */
  private parsePipeline(context: string, allowDecl: boolean, maxVars = 1): Pipeline {
    const line = this.peek()?.line ?? this.lastLine()
    const vars: Array<string> = []
    let assign = false
    if (allowDecl && this.peek()?.kind === "variable") {
      // Look ahead: `$x :=`, `$x =`, `$i, $v :=`.
      let i = 0
      const names: Array<string> = []
      for (;;) {
        const v = this.peek(i)
        if (v?.kind !== "variable") break
        names.push(v.value)
        const after = this.peek(i + 1)
        if (after?.kind === "comma") {
          i += 2
          continue
        }
        if (after?.kind === "declare" || after?.kind === "assign") {
          if (names.length > maxVars) this.fail(`too many declarations in ${context}`, v.line)
          if (after.kind === "assign" && names.length > 1 && context !== "range") {
            this.fail(`too many declarations in ${context}`, v.line)
          }
          vars.push(...names)
          assign = after.kind === "assign"
          this.pos += i + 2
        }
        break
      }
    }
    const commands: Array<Command> = []
    for (;;) {
      commands.push(this.parseCommand(context))
      if (this.peek()?.kind !== "pipe") break
      this.pos++
    }
    return { vars, assign, commands, line }
  }

  private parseCommand(context: string): Command {
    const line = this.peek()?.line ?? this.lastLine()
    const args: Array<Arg> = []
    for (;;) {
      const t = this.peek()
      if (t === undefined || t.kind === "close" || t.kind === "pipe" || t.kind === "rparen") break
      args.push(this.parseOperand(context))
    }
    if (args.length === 0) this.fail(`missing value for ${context}`, line)
    return { args, line }
  }

  private chain(): Array<string> {
    const fields: Array<string> = []
    while (this.peek()?.kind === "field" && this.peek()?.joined === true) fields.push(this.next().value)
    return fields
  }

  private parseOperand(context: string): Arg {
    const t = this.next()
    switch (t.kind) {
      case "dot":
        return { _tag: "Dot" }
      case "nil":
        return { _tag: "Nil" }
      case "bool":
        return { _tag: "Literal", value: t.value === "true" }
      case "string":
        return { _tag: "Literal", value: t.value }
      case "char":
        return { _tag: "Literal", value: Number(t.value) }
      case "number":
        return { _tag: "Literal", value: parseNumber(t.value, (m) => this.fail(m, t.line)) }
      case "field":
        return { _tag: "Field", chain: [t.value, ...this.chain()] }
      case "variable":
        return { _tag: "Variable", name: t.value, chain: this.chain() }
      case "ident":
        // Go refuses a template naming an unknown function when it is parsed, not run.
        if (this.functions !== undefined && !this.functions.has(t.value) && t.value !== "and" && t.value !== "or") {
          this.fail(`function "${t.value}" not defined`, t.line)
        }
        return { _tag: "Function", name: t.value }
      case "lparen":
        return this.nest(t.line, () => {
          const pipe = this.parsePipeline("parenthesized pipeline", false)
          this.expect("rparen", "parenthesized pipeline")
          return { _tag: "Sub", pipe, chain: this.chain() }
        })
      default:
        return this.fail(`unexpected ${describe(t)} in ${context}`, t.line)
    }
  }
}

const describe = (t: Token): string =>
  t.kind === "close"
    ? '"}}"'
    : t.kind === "text"
      ? "text"
      : t.kind === "string"
        ? `quoted string ${JSON.stringify(t.value)}`
        : `<${t.value}>`

const parseNumber = (text: string, fail: (m: string) => never): number => {
  const clean = text.replace(/_/g, "")
  const sign = clean.startsWith("-") ? -1 : 1
  const body = clean.replace(/^[+-]/, "")
  const value = /^0[xX]/.test(body)
    ? Number.parseInt(body.slice(2), 16)
    : /^0[bB]/.test(body)
      ? Number.parseInt(body.slice(2), 2)
      : /^0[oO]/.test(body)
        ? Number.parseInt(body.slice(2), 8)
        : /^0[0-7]+$/.test(body)
          ? Number.parseInt(body.slice(1), 8)
          : Number(body)
  if (Number.isNaN(value)) fail(`bad number syntax: ${text}`)
  return sign * value
}

/**
 * Parses a template's text; the Left's message names the template and line. With `functions`,
 * a call of any other function is refused here, as Go refuses it at parse time.
 */
export const parseTemplate = (
  name: string,
  text: string,
  functions?: ReadonlySet<string>,
): Either.Either<ParsedTemplate, TemplateError> => {
  try {
    const parser = new Parser(name, lex(name, text), functions)
    const body = parser.parseList(["eof"], false).nodes
    return Either.right({ name, body, defines: parser.defines })
  } catch (error) {
    if (error instanceof TemplateError) return Either.left(error)
    throw error
  }
}
