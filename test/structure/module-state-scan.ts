/**
 * Finds state held in module scope: a top-level `let`/`var`, and a `Map`, `Set`, `WeakMap` or
 * `WeakSet` made while a module loads (in a top-level initializer, a class's static field or
 * block, or a function called right where it is written), read from each file's syntax alone
 * with the TypeScript compiler API (no program, no type checker: a few hundred files in well under
 * a second).
 *
 * A `Map`/`Set` made with its contents and never changed is a compiled table, not state, and is
 * not reported: the binding is a `const` holding the collection itself, no `set`/`add`/`delete`/
 * `clear` is called on that name in its file, and, when the binding is exported (other files could
 * change it), its declared type is `ReadonlyMap`/`ReadonlySet`. What this cannot see: state made
 * by a function that a top-level initializer calls (`const memo = makeMemo()`), or a table changed
 * through another name; code review has to catch those.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import ts from "typescript"

export type StateKind = "let" | "var" | "Map" | "Set" | "WeakMap" | "WeakSet"

export interface ModuleState {
  /** Path from the repository root, with `/`. */
  readonly file: string
  readonly line: number
  readonly kind: StateKind
  /** The binding that holds it (`Class.field` for a static field), or `(expression)`. */
  readonly name: string
}

const COLLECTIONS: ReadonlySet<string> = new Set(["Map", "Set", "WeakMap", "WeakSet"])
const MUTATORS: ReadonlySet<string> = new Set(["set", "add", "delete", "clear"])

const isFunctionLike = (node: ts.Node): boolean =>
  ts.isArrowFunction(node) ||
  ts.isFunctionExpression(node) ||
  ts.isFunctionDeclaration(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isGetAccessorDeclaration(node) ||
  ts.isSetAccessorDeclaration(node) ||
  ts.isConstructorDeclaration(node)

const unwrap = (node: ts.Expression): ts.Expression => {
  let e = node
  while (
    ts.isParenthesizedExpression(e) ||
    ts.isAsExpression(e) ||
    ts.isSatisfiesExpression(e) ||
    ts.isNonNullExpression(e) ||
    ts.isTypeAssertionExpression(e)
  )
    e = e.expression
  return e
}

const isStatic = (node: ts.Node): boolean =>
  ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.StaticKeyword)

const isExported = (statement: ts.Statement): boolean =>
  ts.canHaveModifiers(statement) &&
  (ts.getModifiers(statement) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)

/** Names that are the receiver of a `set`/`add`/`delete`/`clear` call somewhere in the file. */
const mutatedNames = (source: ts.SourceFile): ReadonlySet<string> => {
  const names = new Set<string>()
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node)) {
      const callee = unwrap(node.expression)
      if (ts.isPropertyAccessExpression(callee) && MUTATORS.has(callee.name.text)) {
        const receiver = unwrap(callee.expression)
        if (ts.isIdentifier(receiver)) names.add(receiver.text)
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return names
}

/** What module scope holds in one file's text. */
export const scanModuleState = (file: string, text: string): ReadonlyArray<ModuleState> => {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS)
  const mutated = mutatedNames(source)
  const found: Array<ModuleState> = []
  const lineOf = (node: ts.Node): number => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1

  /** Whether `node` (a `new` of a collection bound to `name`) is a compiled table. */
  const isTable = (node: ts.NewExpression, declaration: ts.VariableDeclaration | undefined, exported: boolean) => {
    if (declaration === undefined || !ts.isIdentifier(declaration.name)) return false
    const kind = (node.expression as ts.Identifier).text
    if (kind !== "Map" && kind !== "Set") return false
    if ((node.arguments ?? []).length === 0) return false
    if (mutated.has(declaration.name.text)) return false
    if (!exported) return true
    const type = declaration.type
    return (
      type !== undefined &&
      ts.isTypeReferenceNode(type) &&
      ts.isIdentifier(type.typeName) &&
      (type.typeName.text === "ReadonlyMap" || type.typeName.text === "ReadonlySet")
    )
  }

  /** Walks what runs while the module loads; stops at function bodies unless called in place. */
  const walk = (
    node: ts.Node,
    name: string,
    declaration: ts.VariableDeclaration | undefined,
    exported: boolean,
  ): void => {
    if (ts.isCallExpression(node)) {
      const callee = unwrap(node.expression)
      if (ts.isArrowFunction(callee) || ts.isFunctionExpression(callee)) {
        // An immediately-invoked function: its body runs at load, its locals live on in closures.
        ts.forEachChild(callee.body, (child) => walk(child, name, undefined, exported))
        for (const argument of node.arguments) walk(argument, name, undefined, exported)
        return
      }
    }
    if (isFunctionLike(node)) return
    if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
      walkClass(node)
      return
    }
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && COLLECTIONS.has(node.expression.text)) {
      const direct = declaration?.initializer !== undefined && unwrap(declaration.initializer) === node
      if (!isTable(node, direct ? declaration : undefined, exported))
        found.push({ file, line: lineOf(node), kind: node.expression.text as StateKind, name })
    }
    if (ts.isVariableStatement(node)) {
      walkVariables(node, false)
      return
    }
    ts.forEachChild(node, (child) => walk(child, name, undefined, exported))
  }

  const walkClass = (node: ts.ClassLikeDeclaration): void => {
    const className = node.name?.text ?? "(class)"
    for (const member of node.members) {
      if (ts.isClassStaticBlockDeclaration(member)) walk(member.body, `${className}.static`, undefined, false)
      else if (ts.isPropertyDeclaration(member) && isStatic(member) && member.initializer !== undefined)
        walk(member.initializer, `${className}.${member.name.getText(source)}`, undefined, false)
    }
  }

  const walkVariables = (statement: ts.VariableStatement, topLevel: boolean): void => {
    const list = statement.declarationList
    const flags = list.flags
    const kind: StateKind | undefined =
      flags & ts.NodeFlags.Let ? "let" : flags & (ts.NodeFlags.Const | ts.NodeFlags.Using) ? undefined : "var"
    const exported = topLevel && isExported(statement)
    for (const declaration of list.declarations) {
      const name = declaration.name.getText(source)
      if (kind !== undefined) found.push({ file, line: lineOf(declaration), kind, name })
      if (declaration.initializer !== undefined) walk(declaration.initializer, name, declaration, exported)
    }
  }

  for (const statement of source.statements) {
    if (ts.isVariableStatement(statement)) walkVariables(statement, true)
    else if (ts.isClassDeclaration(statement)) walkClass(statement)
    else if (!ts.isFunctionDeclaration(statement)) walk(statement, "(expression)", undefined, false)
  }
  return found
}

const sourceFiles = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [path] : []
  })

/** What module scope holds in every `.ts` file under `dir` (paths relative to `root`). */
export const scanTree = (root: string, dir: string): ReadonlyArray<ModuleState> =>
  [...sourceFiles(join(root, dir))]
    .sort()
    .flatMap((path) => scanModuleState(relative(root, path).split("\\").join("/"), readFileSync(path, "utf8")))
