/** The parsed form of a template (Go text/template's parse tree, the node kinds it needs). */

/** An operand: a value, or a word naming where to find one. */
export type Arg =
  | { readonly _tag: "Dot" }
  | { readonly _tag: "Nil" }
  | { readonly _tag: "Literal"; readonly value: string | number | boolean }
  /** `.A.B` (from dot). */
  | { readonly _tag: "Field"; readonly chain: ReadonlyArray<string> }
  /** `$x.A.B` (`$` is the template's data). */
  | { readonly _tag: "Variable"; readonly name: string; readonly chain: ReadonlyArray<string> }
  /** A function name (called with the command's other words). */
  | { readonly _tag: "Function"; readonly name: string }
  /** `(pipeline).A.B` */
  | { readonly _tag: "Sub"; readonly pipe: Pipeline; readonly chain: ReadonlyArray<string> }

export interface Command {
  readonly args: ReadonlyArray<Arg>
  readonly line: number
}

export interface Pipeline {
  /** Variables declared (`:=`) or assigned (`=`): one, or two in a range (`$i, $v :=`). */
  readonly vars: ReadonlyArray<string>
  readonly assign: boolean
  readonly commands: ReadonlyArray<Command>
  readonly line: number
}

export type Node =
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "Action"; readonly pipe: Pipeline }
  | {
      readonly _tag: "If" | "With"
      readonly pipe: Pipeline
      readonly list: ReadonlyArray<Node>
      readonly elseList: ReadonlyArray<Node> | undefined
    }
  | {
      readonly _tag: "Range"
      readonly pipe: Pipeline
      readonly list: ReadonlyArray<Node>
      readonly elseList: ReadonlyArray<Node> | undefined
    }
  | { readonly _tag: "Template"; readonly name: string; readonly pipe: Pipeline | undefined; readonly line: number }
  | { readonly _tag: "Break" | "Continue"; readonly line: number }

/** A parsed template: its body and the templates it defines (`define`, `block`), by name. */
export interface ParsedTemplate {
  readonly name: string
  readonly body: ReadonlyArray<Node>
  readonly defines: ReadonlyMap<string, ReadonlyArray<Node>>
}
